// One accepted TCP connection on one event loop. Reads record-marked calls, hands each to the
// CallDispatcher, and writes replies in whatever order they complete (RPC matches replies to
// calls by xid, so a slow procedure does not hold back the others).
//
// Flow control: at most `max_in_flight` calls per connection may be executing or have replies
// waiting to be written; beyond that the connection stops reading (and the client's TCP
// window closes) until replies drain. Records already received stay queued in the
// reassembler meanwhile, so the bound holds even when one recv() carried many calls.
//
// Threads: everything runs on the owning loop's thread except the delivery of a reply that
// completes elsewhere (an executor thread, the interconnect reader that brought a forwarded
// call's answer, the NVRAM committer). Such a thread writes the reply to the socket itself
// when nothing else is being sent (a non-blocking sendmsg that takes it whole), instead of
// posting it to the loop: waking the loop for every such reply cost a context switch per
// call, the largest single cost of a forwarded call on a busy machine. Otherwise (a send in
// flight, replies queued, a short write) it queues the reply for the loop as before. The send
// side (queue, front offset, send in flight, closing, the fd) is shared under send_mu_, so
// exactly one sender writes at a time and the fd is never closed under a sender; the count
// of calls in flight is atomic, and a reply sent elsewhere wakes the loop only when the loop
// must act on it (reading resumes under the bound, or a half-closed peer is done). Replies
// reach the connection through a weak_ptr, so one for a connection that has closed is
// simply dropped.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "server/rpc/call_dispatcher.h"
#include "server/rpc/call_stats.h"
#include "server/rpc/event_loop.h"
#include "server/rpc/record_marking.h"
#include "util/reusing_fifo.h"

namespace nasd::rpc {

struct TcpLimits {
  size_t max_record = 2 << 20;
  size_t max_in_flight = 128;
  size_t recv_buffer = 64 << 10;
  // Connections accepted at once, in total and from one client address (0: no cap); more are
  // closed as soon as they are accepted (see connection_limiter.h).
  size_t max_connections = 4096;
  size_t max_connections_per_address = 256;
  // A connection with no call in progress and nothing received or sent for this long is
  // closed (0: never). Clients reconnect transparently, as after any server-side close.
  std::chrono::milliseconds idle_timeout{std::chrono::minutes(6)};
};

class TcpConnection : public std::enable_shared_from_this<TcpConnection> {
 public:
  using ClosedCallback = std::function<void(TcpConnection*)>;

  // Takes ownership of `fd`. `on_closed` runs (on the loop) once the socket is closed and no
  // operation refers to this object any more; the owner then drops its reference.
  TcpConnection(EventLoop& loop, CallDispatcher& dispatcher, CallStats& stats, int fd,
                CallOrigin origin, TcpLimits limits, ClosedCallback on_closed);
  ~TcpConnection();
  TcpConnection(const TcpConnection&) = delete;
  TcpConnection& operator=(const TcpConnection&) = delete;

  void start();
  // Stops reading and writing; pending replies are discarded.
  void close();

  size_t in_flight() const { return in_flight_.load(std::memory_order_acquire); }
  // No call executing or waiting to be written, and no byte moved since `cutoff`.
  bool idle_since(std::chrono::steady_clock::time_point cutoff) const;
  const CallOrigin& origin() const { return origin_; }

 private:
  template <void (TcpConnection::*Handler)(int)>
  class Op : public EventLoop::Completion {
   public:
    explicit Op(TcpConnection* c) : c_(c) {}
    void on_complete(int result) override { (c_->*Handler)(result); }

   private:
    TcpConnection* c_;
  };

  void on_recv(int result);
  void on_send(int result);
  void arm_recv();
  void dispatch_ready_records();
  void deliver(CallDispatcher::Reply reply);
  // Any thread: sends `reply` from here when nothing else is being sent, else queues it.
  void deliver_from_elsewhere(CallDispatcher::Reply reply);
  // A reply left the socket or was dropped: one call fewer in flight.
  void reply_done(size_t count = 1);
  // On the loop, after replies were sent elsewhere: as at the end of on_send.
  void after_replies_sent();
  void arm_send();
  void finish_if_idle();
  void note_activity();
  bool reading_paused() const { return in_flight() >= limits_.max_in_flight; }

  EventLoop& loop_;
  CallDispatcher& dispatcher_;
  CallStats& stats_;
  int fd_;
  CallOrigin origin_;
  TcpLimits limits_;
  ClosedCallback on_closed_;

  // A fragment body with at least this much still to come is received in place (into its
  // record, RecordReassembler::body_window) rather than through recv_buf_.
  static constexpr size_t kReceiveInPlaceMin = 16 << 10;
  static constexpr size_t kMaxRcvLowat = 4 << 20;
  RecordReassembler reassembler_;
  std::vector<uint8_t> recv_buf_;
  bool recv_in_place_ = false;  // the pending recv writes into the reassembler's record
  // The socket's SO_RCVLOWAT: the rest of the fragment while one is received in place, else 1.
  int rcvlowat_ = 1;
  void set_rcvlowat(size_t bytes);
  Op<&TcpConnection::on_recv> recv_op_{this};
  Op<&TcpConnection::on_send> send_op_{this};
  bool recv_pending_ = false;
  std::atomic<bool> peer_closed_{false};  // EOF seen: answer what was received, then close
  bool finished_ = false;
  // Calls received and not yet answered on the wire (counted before they are dispatched, so
  // a reply sent elsewhere never counts one down before it was counted up).
  std::atomic<size_t> in_flight_{0};
  std::atomic<std::chrono::steady_clock::rep> last_activity_{
      std::chrono::steady_clock::now().time_since_epoch().count()};

  // --- the send side, shared with the threads that deliver replies (see the top) ---
  mutable std::mutex send_mu_;
  bool send_pending_ = false;  // an io_uring sendmsg is in flight
  bool closing_ = false;       // written on the loop under send_mu_; read there without it
  // Replies waiting to be written; the front one may be partly sent already.
  util::ReusingFifo<CallDispatcher::Reply> send_queue_;
  size_t front_offset_ = 0;
  // Pieces per sendmsg (the kernel's UIO_MAXIOV): a 1 MiB READ sent from cache blocks is up to
  // 256 of them plus its head and body, so several such replies go in one call.
  static constexpr size_t kMaxIov = 1024;
  iovec iov_[kMaxIov]{};
  msghdr send_msg_{};
};

}  // namespace nasd::rpc
