#include "nvram/record.h"

#include <bit>
#include <cstring>

#include "nvram/crc32c.h"

namespace nasd::nvram {

static_assert(std::endian::native == std::endian::little, "NVRAM layout is little-endian");

const char* record_type_name(RecordType t) {
  switch (t) {
    case RecordType::Pad: return "PAD";
    case RecordType::Call: return "CALL";
  }
  return "UNKNOWN";
}

void encode_record(uint8_t* dst, const RecordKey& key, std::span<const std::span<const uint8_t>> parts) {
  size_t length = 0;
  for (auto p : parts) length += p.size();
  RecordHeader h{};
  h.magic = kRecordMagic;
  h.pos = key.pos;
  h.seq = key.seq;
  h.length = static_cast<uint32_t>(length);
  h.volume = key.volume;
  h.type = static_cast<uint16_t>(key.type);
  h.version = kRecordVersion;
  h.epoch = key.epoch;
  uint32_t crc = crc32c(&h, sizeof h);
  uint8_t* body = dst + sizeof h;
  for (auto p : parts) {
    if (p.empty()) continue;  // an empty span may carry a null pointer
    std::memcpy(body, p.data(), p.size());
    crc = crc32c_extend(crc, p.data(), p.size());
    body += p.size();
  }
  // Zero the alignment tail so a mirrored or dumped record is byte-for-byte deterministic.
  std::memset(body, 0, record_footprint(length) - sizeof h - length);
  h.crc = crc;
  // The header goes last: until it is complete, a reader sees no (or a torn) record here.
  std::memcpy(dst, &h, sizeof h);
}

DecodeResult decode_record(const uint8_t* src, size_t avail, uint64_t pos, RecordView* out) {
  if (avail < sizeof(RecordHeader)) return DecodeResult::NoRecord;
  RecordHeader h;
  std::memcpy(&h, src, sizeof h);
  if (h.magic != kRecordMagic || h.pos != pos) return DecodeResult::NoRecord;
  if (h.version != kRecordVersion) return DecodeResult::OldVersion;
  if (h.length > avail - sizeof h) return DecodeResult::TooLong;
  uint32_t stored = h.crc;
  h.crc = 0;
  uint32_t crc = crc32c(&h, sizeof h);
  crc = crc32c_extend(crc, src + sizeof h, h.length);
  if (crc != stored) return DecodeResult::Torn;
  out->pos = pos;
  out->seq = h.seq;
  out->volume = h.volume;
  out->epoch = h.epoch;
  out->type = static_cast<RecordType>(h.type);
  out->payload = {src + sizeof h, h.length};
  out->bytes = {src, sizeof h + h.length};
  return DecodeResult::Ok;
}

}  // namespace nasd::nvram
