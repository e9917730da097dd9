// Framing of the node-to-node byte stream. Every message is one frame:
//
//   u32 magic "NSIC" | u16 protocol version | u16 message type | u64 request id |
//   u32 payload length | u32 CRC-32C | payload
//
// The CRC covers the first 20 header bytes and the payload, so a torn or corrupted frame (a
// peer that died mid-write, a bit flip) is detected and the connection dropped instead of being
// misparsed. The length is bounded before anything is allocated for it. On the wire every frame
// is followed by its 32-byte tag (util/link_seal.h: Socket::seal_with, read_frame's opener),
// which is what makes a frame trustworthy; the CRC only catches accidents.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nasd::interconnect {

inline constexpr uint32_t kFrameMagic = 0x4349534E;  // "NSIC" little-endian
// 2: the hello names the connection's session (hello.h, link_session.h).
inline constexpr uint16_t kProtocolVersion = 2;
inline constexpr size_t kFrameHeaderBytes = 24;
// Fits a 1 MiB NFS READ/WRITE plus headers with room to spare.
inline constexpr uint32_t kDefaultMaxFramePayload = 4u << 20;

enum class MessageType : uint16_t {
  Hello = 1,          // client -> server, first frame: who I am (payload: Hello)
  HelloAccepted = 2,  // server -> client: who I am (payload: Hello)
  HelloRefused = 3,   // server -> client, then close (payload: reason text)
  Reply = 4,          // answer to a request with the same request id
  Unsupported = 5,    // answer: the server has no handler for that request type
  VolumeCall = 16,    // a forwarded Volume call (fs/call/codec.h)
  Heartbeat = 17,     // membership heartbeat (membership/heartbeat)
  UnitCall = 40,      // a stripe-unit call of the scale-out volume (cluster/scaleout/unit_codec.h)
  IfsReadLayout = 41, // where a READ's bytes of the scale-out volume are (cluster/scaleout/read_layout.h)
  NlmCall = 42,       // an NLM call for a volume the receiver serves (nlm_call_codec.h)
  NlmClientRebooted = 43,  // a client's SM_NOTIFY or FREE_ALL, passed on (nlm_call_codec.h)
  NlmCallback = 44,   // a call back to a client, made from the node it called (nlm_call_codec.h)
};

struct FrameHeader {
  uint32_t magic = kFrameMagic;
  uint16_t version = kProtocolVersion;
  MessageType type = MessageType::Reply;
  uint64_t request_id = 0;
  uint32_t length = 0;
  uint32_t crc = 0;
};

struct Frame {
  FrameHeader header;
  std::vector<uint8_t> payload;
};

// The header of a frame carrying `payload` (its CRC computed): written before the payload,
// which then need not be copied next to it.
std::array<uint8_t, kFrameHeaderBytes> encode_frame_header(MessageType type, uint64_t request_id,
                                                           std::span<const uint8_t> payload,
                                                           uint16_t version = kProtocolVersion);

// Header + payload, ready to write.
std::vector<uint8_t> encode_frame(MessageType type, uint64_t request_id,
                                  std::span<const uint8_t> payload,
                                  uint16_t version = kProtocolVersion);

// Parses the fixed header; fails on a wrong magic or a length over `max_payload`. The version
// is not judged here (the hello exchange answers a foreign version with a clear refusal).
bool parse_frame_header(std::span<const uint8_t, kFrameHeaderBytes> bytes, uint32_t max_payload,
                        FrameHeader* out, std::string* error);

// True when header.crc matches the header fields and the payload.
bool frame_crc_ok(const FrameHeader& header, std::span<const uint8_t> payload);

// CRC-32C (util/crc32c.h) of a byte span, continuing from `seed`.
uint32_t crc32c(std::span<const uint8_t> data, uint32_t seed = 0);

}  // namespace nasd::interconnect
