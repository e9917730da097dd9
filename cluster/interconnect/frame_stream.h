// Reading and writing whole frames on a socket. A frame that is cut short, fails its CRC or is
// too large is an error: the caller drops the connection, since the stream cannot be
// resynchronized once a frame boundary is lost.
#pragma once

#include <chrono>
#include <span>
#include <string>
#include <vector>

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

// The same, for the long-lived reader of one connection: it reads what the socket has (up to
// kBufferBytes at once) and cuts frames out of it, so a burst of batched frames costs one
// system call instead of two per piece of every frame. Same checks, same order: the header's
// length is bounded before anything is allocated for the payload. One reader per connection,
// used by one thread; bytes it buffered belong to the frames that follow.
class FrameReader {
 public:
  static constexpr size_t kBufferBytes = 256 * 1024;
  explicit FrameReader(int fd) : fd_(fd) {}
  ReadStatus read(const FrameLimits& limits, Frame* out, std::string* error,
                  link::FrameOpener* opener = nullptr);
  // Whether the next read() is answered from what is buffered, without waiting for the socket
  // (a whole frame, with its tag when `sealed`, is already here).
  bool has_whole_frame(bool sealed) const;

 private:
  // Until `n` bytes are buffered: the first within `first_timeout` (when none is buffered yet),
  // the rest without a pause longer than `stall_timeout`.
  ReadStatus fill(size_t n, std::chrono::milliseconds first_timeout,
                  std::chrono::milliseconds stall_timeout, std::string* error);
  std::span<const uint8_t> take(size_t n);

  const int fd_;
  std::vector<uint8_t> buffer_;
  size_t begin_ = 0;  // buffer_[begin_, end_) is read but not yet taken
  size_t end_ = 0;
};

bool send_frame(Socket& socket, MessageType type, uint64_t request_id,
                std::span<const uint8_t> payload, std::string* error);
// As send_frame, for a sender that must not wait (Socket::try_send_frame_pieces).
Socket::TrySend try_send_frame(Socket& socket, MessageType type, uint64_t request_id,
                               std::span<const uint8_t> payload, std::string* error);

}  // namespace nasd::interconnect
