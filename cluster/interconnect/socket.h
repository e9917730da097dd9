// A connected TCP socket shared by the reader thread and every sender of one connection.
// Sends are serialized so frames from concurrent callers never interleave; `shutdown()` makes a
// blocked reader return at once, which is how connections are dropped and services stopped.
//
// Batching: a sender that finds another send under way does not wait for it. Its frame (and
// tag) is appended to a queue that the sender already writing drains before it returns, as one
// write per round: when calls or replies queue up, many frames leave in one system call. A
// frame is sealed when it is queued, so tags follow the order of the bytes on the wire.
// The fd is closed only when the last owner lets go, so a late sender can never write into a
// newer connection that happened to reuse the descriptor number.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "util/link_seal.h"
#include "util/net.h"

namespace nasd::interconnect {

class Socket {
 public:
  // Takes ownership of `fd`. `send_timeout`: a peer that stops reading fails our sends after
  // this long instead of blocking every caller behind the write lock.
  Socket(int fd, std::chrono::milliseconds send_timeout);
  ~Socket();
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  // Writes one whole frame; once sealed (seal_with), followed by its tag. True when it was
  // written, or queued behind a send under way on another thread (if that write fails, the
  // socket is shut down, so the frame's loss is seen by the reader as a dropped connection).
  bool send_all(std::span<const uint8_t> bytes, std::string* error) {
    return send_frame_pieces(bytes, {}, error);
  }
  // The same for a frame given as two pieces (its header, its payload): written with the tag
  // in one sendmsg, so the payload is neither copied next to its header nor into the queue
  // unless another send is under way.
  bool send_frame_pieces(std::span<const uint8_t> head, std::span<const uint8_t> body,
                         std::string* error);
  // For a sender that must not wait (an event-loop thread): NotNow, with nothing sent or
  // sealed, when no send is under way and the socket has no room right now (a peer that does
  // not read); otherwise as send_frame_pieces. A frame sent this way should be small.
  enum class TrySend { Sent, NotNow, Failed };
  TrySend try_send_frame_pieces(std::span<const uint8_t> head, std::span<const uint8_t> body,
                                std::string* error);
  // Holds the frames sent from now on (by any thread) and writes them together when it ends:
  // for a reader that answers a burst of requests it read at once, one write for all the
  // answers instead of one each. Claims the writer's role while no send is under way (else the
  // sender under way writes them anyway). Not nested; ended by end_batch() on the same thread.
  void begin_batch();
  void end_batch();
  // Frames sent and the writes that carried them (frames / writes > 1: batching at work).
  uint64_t frames_sent() const;
  uint64_t writes() const;
  // From now on every send_all is one frame and carries a tag (link_seal.h). Called once,
  // right after the link handshake and before any frame is sent.
  void seal_with(link::FrameSealer sealer);
  void shutdown();
  // Drops the connection so that nothing more of it reaches the peer: unsent and unacknowledged
  // bytes are discarded and the final close sends a reset (SO_LINGER 0) instead of the kernel
  // retransmitting them, e.g. after a partition heals. Wakes a blocked reader like shutdown().
  void abort();
  // Makes every close of this connection a reset (SO_LINGER 0), including the one the kernel
  // does when the process dies: a forwarder killed with kill -9 then leaves no request of its own
  // behind in its kernel to reach the owner later (after a partition heals, say), when the
  // client may have had it answered elsewhere and moved on. What reached the owner's kernel
  // before the death still arrives (the owner's answered calls deal with those copies).
  void reset_when_closed();

 private:
  // Writes the queue until it is empty (the writer's role held); false on a failed write.
  bool drain_locked(std::unique_lock<std::mutex>& lock, bool ok);
  // Seals the frame and writes it, or queues it behind the send under way. Called with mu_
  // held through `lock` (released while writing), the socket not failed.
  bool send_locked(std::unique_lock<std::mutex>& lock, std::span<const uint8_t> head,
                   std::span<const uint8_t> body, std::string* error);
  // Writes the pieces whole (one system call when the socket takes them at once); on a
  // failure shuts the socket down, since a partial frame may be on the wire.
  bool write_pieces(std::span<const uint8_t> a, std::span<const uint8_t> b,
                    std::span<const uint8_t> c, std::string* error);

  const int fd_;
  mutable std::mutex mu_;
  std::optional<link::FrameSealer> sealer_;  // guarded by mu_
  bool writing_ = false;                     // a sender is writing; others queue
  bool batching_ = false;                    // begin_batch() claimed the writer's role
  bool failed_ = false;                      // a write failed: the stream is unusable
  std::vector<uint8_t> queue_;               // frames waiting for the writer
  uint64_t queued_frames_ = 0;
  uint64_t frames_sent_ = 0;
  uint64_t writes_ = 0;
};

// The connections are made and read with the shared helpers (util/net.h, IPv4 and IPv6).
using util::connect_tcp;
using util::listen_tcp;
using util::read_exact;
using util::ReadStatus;

}  // namespace nasd::interconnect
