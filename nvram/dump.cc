#include "nvram/dump.h"

#include "nvram/log_layout.h"
#include "fs/call/codec.h"
#include "nvram/call_record.h"

namespace nasd::nvram {

std::string dump_region(const Region& region) {
  const RegionHeader* h = region.header();
  ScanResult scan = scan_log(region, h->head, h->head + h->log_size);
  std::string out = "region uuid=" + std::to_string(h->uuid) +
                    " log_size=" + std::to_string(h->log_size) + " epoch=" +
                    std::to_string(h->epoch) + " head=" + std::to_string(h->head) +
                    " tail=" + std::to_string(h->tail) + " valid_end=" + std::to_string(scan.end) +
                    " records=" + std::to_string(scan.records.size()) + "\n";
  for (const RecordView& r : scan.records) {
    out += "record pos=" + std::to_string(r.pos) + " vol=" + std::to_string(r.volume) +
           " seq=" + std::to_string(r.seq) + " epoch=" + std::to_string(r.epoch) +
           " len=" + std::to_string(r.payload.size()) + " ";
    CallRecord rec;
    std::string error;
    if (r.type == RecordType::Call && decode_call_record(r.payload, &rec, &error))
      out += fs::call::describe_request(rec.request);
    else
      out += std::string(record_type_name(r.type)) + " (undecodable: " + error + ")";
    out += "\n";
  }
  return out;
}

}  // namespace nasd::nvram
