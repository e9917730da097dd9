#include "nvram/log_layout.h"

#include <cstring>

namespace nasd::nvram {

namespace {

uint64_t lap_end(uint64_t pos, uint64_t log_size) { return (pos / log_size + 1) * log_size; }

}  // namespace

uint64_t place_record(uint64_t tail, uint64_t footprint, uint64_t log_size) {
  uint64_t end = lap_end(tail, log_size);
  return end - tail >= footprint ? tail : end;
}

void write_skip(Region& region, uint64_t from, uint64_t to, uint32_t epoch) {
  if (to - from < sizeof(RecordHeader)) return;
  RecordKey key;
  key.pos = from;
  key.epoch = epoch;
  key.type = RecordType::Pad;
  encode_record(region.at(from), key, {});
}

uint64_t max_payload(uint64_t log_size) { return log_size / 2 - sizeof(RecordHeader); }

uint64_t walk_headers(const Region& region, uint64_t from, uint64_t to,
                      const std::function<bool(const RecordHeader&)>& visit) {
  const uint64_t log_size = region.log_size();
  uint64_t pos = from;
  while (pos < to) {
    uint64_t end = lap_end(pos, log_size);
    if (end - pos < sizeof(RecordHeader)) {
      pos = end;
      continue;
    }
    RecordHeader h;
    std::memcpy(&h, region.at(pos), sizeof h);
    if (h.type == static_cast<uint16_t>(RecordType::Pad)) {
      pos = end;
      continue;
    }
    if (!visit(h)) return pos;
    pos += record_footprint(h.length);
  }
  return pos;
}

ScanResult scan_log(const Region& region, uint64_t from, uint64_t limit) {
  const uint64_t log_size = region.log_size();
  if (limit > from + log_size) limit = from + log_size;
  ScanResult result;
  uint64_t pos = from;
  uint32_t epoch = 0;
  while (pos < limit) {
    uint64_t end = lap_end(pos, log_size);
    if (end - pos < sizeof(RecordHeader)) {
      pos = end;
      continue;
    }
    RecordView rec;
    DecodeResult r = decode_record(region.at(pos), end - pos, pos, &rec);
    if (r == DecodeResult::Ok && rec.epoch < epoch) r = DecodeResult::NoRecord;
    if (r != DecodeResult::Ok) {
      result.stop = r;
      result.end = pos;
      return result;
    }
    epoch = rec.epoch;
    if (rec.type == RecordType::Pad) {
      pos = end;
      continue;
    }
    result.records.push_back(rec);
    pos = rec.end();
  }
  result.end = pos;
  result.stop = DecodeResult::Ok;
  return result;
}

}  // namespace nasd::nvram
