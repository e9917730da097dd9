// Reading and writing whole frames on a socket. A frame that is cut short, fails its CRC or is
// too large is an error: the caller drops the connection, since the stream cannot be
// resynchronized once a frame boundary is lost.
#pragma once

#include <chrono>
#include <string>

#include "cluster/interconnect/frame.h"
#include "cluster/interconnect/socket.h"
#include "util/link_seal.h"

namespace nasd::interconnect {

struct FrameLimits {
  uint32_t max_payload = kDefaultMaxFramePayload;
  // Between frames: how long to wait for the next one (negative = forever).
  std::chrono::milliseconds idle_timeout{-1};
  // Within a frame: how long the peer may pause before the frame counts as half-written.
  std::chrono::milliseconds stall_timeout{5000};
};

// With `opener` (an authenticated link), the frame must be followed by its tag and the tag must
// be the next one expected; a frame that fails it is an Error like a torn one.
ReadStatus read_frame(int fd, const FrameLimits& limits, Frame* out, std::string* error,
                      link::FrameOpener* opener = nullptr);

bool send_frame(Socket& socket, MessageType type, uint64_t request_id,
                std::span<const uint8_t> payload, std::string* error);

}  // namespace nasd::interconnect
