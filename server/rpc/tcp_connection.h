// One accepted TCP connection on one event loop. Reads record-marked calls, hands each to the
// CallDispatcher, and writes replies in whatever order they complete (RPC matches replies to
// calls by xid, so a slow procedure does not hold back the others).
//
// Flow control: at most `max_in_flight` calls per connection may be executing or have replies
// waiting to be written; beyond that the connection stops reading (and the client's TCP
// window closes) until replies drain. Records already received stay queued in the
// reassembler meanwhile, so the bound holds even when one recv() carried many calls.
//
// All methods run on the owning loop's thread. Executor threads reach the connection only
// through EventLoop::post() holding a weak_ptr, so a reply for a connection that has closed
// is simply dropped.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "server/rpc/call_dispatcher.h"
#include "server/rpc/call_stats.h"
#include "server/rpc/event_loop.h"
#include "server/rpc/record_marking.h"

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

  size_t in_flight() const { return in_flight_; }
  // No call executing or waiting to be written, and no byte moved since `cutoff`.
  bool idle_since(std::chrono::steady_clock::time_point cutoff) const {
    return in_flight_ == 0 && send_queue_.empty() && last_activity_ < cutoff;
  }
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
  void arm_send();
  void finish_if_idle();
  bool reading_paused() const { return in_flight_ >= limits_.max_in_flight; }

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
  RecordReassembler reassembler_;
  std::vector<uint8_t> recv_buf_;
  bool recv_in_place_ = false;  // the pending recv writes into the reassembler's record
  Op<&TcpConnection::on_recv> recv_op_{this};
  Op<&TcpConnection::on_send> send_op_{this};
  bool recv_pending_ = false;
  bool send_pending_ = false;
  bool peer_closed_ = false;  // EOF seen: answer what was received, then close
  bool closing_ = false;
  bool finished_ = false;
  size_t in_flight_ = 0;
  std::chrono::steady_clock::time_point last_activity_ = std::chrono::steady_clock::now();

  // Replies waiting to be written; the front one may be partly sent already.
  std::deque<CallDispatcher::Reply> send_queue_;
  size_t front_offset_ = 0;
  // Pieces per sendmsg (the kernel's UIO_MAXIOV): a 1 MiB READ sent from cache blocks is up to
  // 256 of them plus its head and body, so several such replies go in one call.
  static constexpr size_t kMaxIov = 1024;
  iovec iov_[kMaxIov]{};
  msghdr send_msg_{};
};

}  // namespace nasd::rpc
