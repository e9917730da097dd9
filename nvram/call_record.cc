#include "nvram/call_record.h"

#include <algorithm>
#include <cstdlib>

#include "fs/call/codec.h"
#include "nvram/record.h"
#include "nvram/reply_window.h"

namespace nasd::nvram {

std::optional<fs::InodeId> CallRecord::created() const {
  if (const auto* r = std::get_if<fs::call::CreatedResult>(&reply.result)) return r->id;
  return std::nullopt;
}

void CallRecordPieces::set_request(const fs::call::VolumeRequest& recorded) {
  prefix.clear();
  fs::call::write_request(prefix, recorded, /*omit_write_data=*/true);
  data = fs::call::write_data(recorded);
}

void CallRecordPieces::set_reply(const fs::call::VolumeReply& reply) {
  suffix.clear();
  fs::call::write_reply(suffix, reply);
}

bool decode_call_record(std::span<const uint8_t> payload, CallRecord* out, std::string* error) {
  util::ByteReader r(payload);
  if (fs::call::read_request(r, &out->request)) {
    const fs::call::VolumeOp op = out->request.op();
    if (!fs::call::is_mutation(op)) {
      r.fail(std::string("a journal record cannot hold ") + fs::call::volume_op_name(op));
    } else if (fs::call::read_reply(r, op, &out->reply)) {
      if (out->reply.status != fs::Status::Ok)
        r.fail(std::string("journalled call with status ") + fs::status_name(out->reply.status));
      else if (std::holds_alternative<std::monostate>(out->reply.result))
        r.fail("journalled call without its results");
    }
  }
  if (r.expect_end()) return true;
  if (error) *error = r.error();
  return false;
}

int fuzz_journal_record(const uint8_t* data, size_t size) {
  RecordView view;
  if (decode_record(data, size, 0, &view) == DecodeResult::Ok) {
    CallRecord rec;
    std::string error;
    if (view.type == RecordType::Call && decode_call_record(view.payload, &rec, &error)) {
      // What decodes re-encodes to the very same payload.
      CallRecordPieces pieces;
      pieces.set_request(rec.request);
      pieces.set_reply(rec.reply);
      std::vector<uint8_t> again(pieces.prefix.data());
      again.insert(again.end(), pieces.data.begin(), pieces.data.end());
      again.insert(again.end(), pieces.suffix.data().begin(), pieces.suffix.data().end());
      if (!std::equal(again.begin(), again.end(), view.payload.begin(), view.payload.end()))
        std::abort();
    }
  }
  // The payload decoder alone, on bytes no CRC vouches for.
  CallRecord rec;
  decode_call_record({data, size}, &rec, nullptr);
  // The reply window file (reply_window.h), whose entries are Call payloads.
  std::vector<std::vector<uint8_t>> window;
  std::string error;
  if (parse_reply_window({data, data + size}, &window, &error))
    for (const auto& payload : window) decode_call_record(payload, &rec, nullptr);
  return 0;
}

}  // namespace nasd::nvram
