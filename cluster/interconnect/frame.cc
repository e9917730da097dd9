#include "cluster/interconnect/frame.h"

#include <cstring>

#include "cluster/interconnect/wire_buffer.h"
#include "util/crc32c.h"

namespace nasd::interconnect {
namespace {

constexpr size_t kCrcCoveredHeaderBytes = 20;

// Little-endian, as util/byte_io.h writes them, straight into the header array (no
// allocation: this runs for every frame of every forwarded call).
template <class T>
uint8_t* put_le(uint8_t* p, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
  return p + sizeof(T);
}

// The first kCrcCoveredHeaderBytes of the header.
std::array<uint8_t, kCrcCoveredHeaderBytes> header_fields(uint16_t version, MessageType type,
                                                          uint64_t id, uint32_t length) {
  std::array<uint8_t, kCrcCoveredHeaderBytes> h;
  uint8_t* p = h.data();
  p = put_le(p, kFrameMagic);
  p = put_le(p, version);
  p = put_le(p, static_cast<uint16_t>(type));
  p = put_le(p, id);
  put_le(p, length);
  return h;
}

uint32_t frame_crc(uint16_t version, MessageType type, uint64_t id,
                   std::span<const uint8_t> payload) {
  auto head = header_fields(version, type, id, static_cast<uint32_t>(payload.size()));
  return crc32c(payload, crc32c(head));
}

}  // namespace

uint32_t crc32c(std::span<const uint8_t> data, uint32_t seed) {
  return util::crc32c(data.data(), data.size(), seed);
}

std::array<uint8_t, kFrameHeaderBytes> encode_frame_header(MessageType type, uint64_t request_id,
                                                           std::span<const uint8_t> payload,
                                                           uint16_t version) {
  std::array<uint8_t, kFrameHeaderBytes> out;
  auto fields = header_fields(version, type, request_id, static_cast<uint32_t>(payload.size()));
  std::memcpy(out.data(), fields.data(), fields.size());
  put_le(out.data() + kCrcCoveredHeaderBytes, crc32c(payload, crc32c(fields)));
  return out;
}

std::vector<uint8_t> encode_frame(MessageType type, uint64_t request_id,
                                  std::span<const uint8_t> payload, uint16_t version) {
  auto head = encode_frame_header(type, request_id, payload, version);
  std::vector<uint8_t> out(kFrameHeaderBytes + payload.size());
  std::memcpy(out.data(), head.data(), head.size());
  if (!payload.empty()) std::memcpy(out.data() + kFrameHeaderBytes, payload.data(), payload.size());
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
