#include "cluster/interconnect/frame.h"

#include <boost/crc.hpp>

#include "cluster/interconnect/wire_buffer.h"

namespace nasd::interconnect {
namespace {

constexpr size_t kCrcCoveredHeaderBytes = 20;

void put_header_fields(WireWriter& w, uint16_t version, MessageType type, uint64_t id,
                       uint32_t length) {
  w.u32(kFrameMagic);
  w.u16(version);
  w.u16(static_cast<uint16_t>(type));
  w.u64(id);
  w.u32(length);
}

uint32_t frame_crc(uint16_t version, MessageType type, uint64_t id,
                   std::span<const uint8_t> payload) {
  WireWriter w;
  put_header_fields(w, version, type, id, static_cast<uint32_t>(payload.size()));
  std::vector<uint8_t> head = w.take();
  return crc32c(payload, crc32c({head.data(), kCrcCoveredHeaderBytes}));
}

}  // namespace

uint32_t crc32c(std::span<const uint8_t> data, uint32_t seed) {
  // Castagnoli polynomial, reflected; `seed` chains calls over pieces.
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc(seed ^ 0xFFFFFFFF);
  crc.process_bytes(data.data(), data.size());
  return crc.checksum();
}

std::vector<uint8_t> encode_frame(MessageType type, uint64_t request_id,
                                  std::span<const uint8_t> payload, uint16_t version) {
  WireWriter w;
  put_header_fields(w, version, type, request_id, static_cast<uint32_t>(payload.size()));
  w.u32(frame_crc(version, type, request_id, payload));
  std::vector<uint8_t> out = w.take();
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

bool parse_frame_header(std::span<const uint8_t, kFrameHeaderBytes> bytes, uint32_t max_payload,
                        FrameHeader* out, std::string* error) {
  WireReader r(bytes);
  uint16_t type = 0;
  r.u32(&out->magic);
  r.u16(&out->version);
  r.u16(&type);
  r.u64(&out->request_id);
  r.u32(&out->length);
  r.u32(&out->crc);
  out->type = static_cast<MessageType>(type);
  if (out->magic != kFrameMagic) {
    *error = "bad frame magic (not a nasd interconnect peer, or stream out of sync)";
    return false;
  }
  if (out->length > max_payload) {
    *error = "frame payload of " + std::to_string(out->length) + " bytes exceeds limit " +
             std::to_string(max_payload);
    return false;
  }
  return true;
}

bool frame_crc_ok(const FrameHeader& header, std::span<const uint8_t> payload) {
  return header.length == payload.size() &&
         frame_crc(header.version, header.type, header.request_id, payload) == header.crc;
}

}  // namespace nasd::interconnect
