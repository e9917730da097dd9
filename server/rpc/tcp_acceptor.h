// Accepts connections from one listening socket on one event loop and owns them while they
// live. Several loops may each run an acceptor on the same listening socket; the kernel hands
// every new connection to one of them, which spreads connections across cores.
//
// Accept failures never stop accepting: running out of descriptors (EMFILE, ENFILE) or memory
// backs off briefly and retries, so the server recovers once load drops.
//
// Every connection is admitted by the shared ConnectionLimiter (caps per client address and in
// total) or closed at once, and a periodic sweep closes connections idle for
// TcpLimits::idle_timeout.
#pragma once

#include <sys/socket.h>

#include <memory>
#include <unordered_map>

#include "server/rpc/call_dispatcher.h"
#include "server/rpc/call_stats.h"
#include "server/rpc/connection_limiter.h"
#include "server/rpc/event_loop.h"
#include "server/rpc/tcp_connection.h"

namespace nasd::rpc {

class TcpAcceptor {
 public:
  // Does not own `listen_fd`. `port` is reported to services as CallContext::local_port.
  // `limiter` (shared, may be null: no caps) must outlive the acceptor.
  TcpAcceptor(EventLoop& loop, int listen_fd, uint16_t port, CallDispatcher& dispatcher,
              CallStats& stats, TcpLimits limits, ConnectionLimiter* limiter = nullptr);
  ~TcpAcceptor();
  TcpAcceptor(const TcpAcceptor&) = delete;
  TcpAcceptor& operator=(const TcpAcceptor&) = delete;

  // Loop thread only.
  void start();
  size_t connection_count() const { return connections_.size(); }

 private:
  template <void (TcpAcceptor::*Handler)(int)>
  class Op : public EventLoop::Completion {
   public:
    explicit Op(TcpAcceptor* a) : a_(a) {}
    void on_complete(int result) override { (a_->*Handler)(result); }

   private:
    TcpAcceptor* a_;
  };

  void arm_accept();
  void on_accept(int result);
  void on_backoff_done(int result);
  void arm_sweep();
  void on_sweep(int result);

  EventLoop& loop_;
  int listen_fd_;
  uint16_t port_;
  CallDispatcher& dispatcher_;
  CallStats& stats_;
  TcpLimits limits_;

  sockaddr_storage peer_{};
  socklen_t peer_len_ = sizeof peer_;
  __kernel_timespec backoff_{0, 0};
  Op<&TcpAcceptor::on_accept> accept_op_{this};
  Op<&TcpAcceptor::on_backoff_done> backoff_op_{this};
  ConnectionLimiter* limiter_;
  __kernel_timespec sweep_every_{0, 0};
  Op<&TcpAcceptor::on_sweep> sweep_op_{this};
  std::unordered_map<TcpConnection*, std::shared_ptr<TcpConnection>> connections_;
};

}  // namespace nasd::rpc
