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

  // --- For an owner that must never wait (an event loop told the socket is readable) ---
  // One recv(MSG_DONTWAIT) of what the socket holds, appended to the buffer: Ok when bytes
  // came (or a whole frame is buffered already: nothing is read then, take it first), Timeout
  // when none were there (EAGAIN), Eof when the peer closed between frames, Error when it
  // closed mid-frame, recv failed or the frame under way has a bad header. Never waits. The
  // buffer is made room for a frame only after its header passed parse_frame_header (length
  // <= limits.max_payload), so it never exceeds max(kBufferBytes, one frame). `sealed`: frames
  // carry a tag (an authenticated link), as next_buffered's `opener` says.
  ReadStatus receive_available(const FrameLimits& limits, bool sealed, std::string* error);
  // The next whole frame out of what is buffered, with every check of read(): Ok; Timeout when
  // no whole frame is buffered yet (nothing taken); Error for a bad header, CRC or tag.
  ReadStatus next_buffered(const FrameLimits& limits, Frame* out, std::string* error,
                           link::FrameOpener* opener = nullptr);
  // Once next_buffered() answered Timeout: part of a frame is buffered, and the owner bounds
  // how long that may last (limits.stall_timeout; read() does it by waiting, this half never).
  bool mid_frame() const { return end_ > begin_; }

 private:
  // Room for `n` bytes from the front of the buffer: what is left moves to the front, and the
  // buffer grows only when one frame needs more than it holds (the caller bounds `n`).
  void make_room(size_t n);
  // The length the buffer must hold from begin_ for the frame under way: its header, or (once
  // the header is here and valid) the whole frame. False for a header that fails its checks.
  bool bytes_needed(const FrameLimits& limits, bool sealed, size_t* needed,
                    std::string* error) const;
  // Until `n` bytes are buffered: the first within `first_timeout` (when none is buffered yet),
  // the rest without a pause longer than `stall_timeout`.
  ReadStatus fill(size_t n, std::chrono::milliseconds first_timeout,
                  std::chrono::milliseconds stall_timeout, std::string* error);
  // Makes recv() wait at most `timeout` (negative: forever); false when the socket refused.
  bool wait_in_recv(std::chrono::milliseconds timeout, std::string* error);
  std::span<const uint8_t> take(size_t n);

  const int fd_;
  std::vector<uint8_t> buffer_;
  size_t begin_ = 0;  // buffer_[begin_, end_) is read but not yet taken
  size_t end_ = 0;
  static constexpr std::chrono::milliseconds kTimeoutUnset{-2};
  std::chrono::milliseconds recv_timeout_ = kTimeoutUnset;  // the socket's SO_RCVTIMEO
};

bool send_frame(Socket& socket, MessageType type, uint64_t request_id,
                std::span<const uint8_t> payload, std::string* error);
// As send_frame, for a sender that must not wait (Socket::try_send_frame_pieces).
Socket::TrySend try_send_frame(Socket& socket, MessageType type, uint64_t request_id,
                               std::span<const uint8_t> payload, std::string* error);

}  // namespace nasd::interconnect
