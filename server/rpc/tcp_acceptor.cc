#include "server/rpc/tcp_acceptor.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace nasd::rpc {
namespace {

constexpr long kBackoffNanos = 100L * 1000 * 1000;  // retry accept after resource exhaustion

}  // namespace

TcpAcceptor::TcpAcceptor(EventLoop& loop, int listen_fd, uint16_t port,
                         CallDispatcher& dispatcher, CallStats& stats, TcpLimits limits,
                         ConnectionLimiter* limiter)
    : loop_(loop),
      listen_fd_(listen_fd),
      port_(port),
      dispatcher_(dispatcher),
      stats_(stats),
      limits_(limits),
      limiter_(limiter) {}

TcpAcceptor::~TcpAcceptor() = default;

void TcpAcceptor::start() {
  arm_accept();
  arm_sweep();
}

void TcpAcceptor::arm_sweep() {
  if (limits_.idle_timeout.count() <= 0) return;
  // A quarter of the timeout (100 ms .. 10 s): a connection is closed at most 25% late.
  const auto every = std::clamp<std::chrono::milliseconds>(
      limits_.idle_timeout / 4, std::chrono::milliseconds(100), std::chrono::seconds(10));
  sweep_every_ = {static_cast<long long>(every.count() / 1000),
                  static_cast<long long>(every.count() % 1000) * 1000000};
  loop_.timeout(&sweep_every_, &sweep_op_);
}

void TcpAcceptor::on_sweep(int) {
  if (loop_.stopping()) return;
  const auto cutoff = std::chrono::steady_clock::now() - limits_.idle_timeout;
  std::vector<TcpConnection*> idle;
  for (auto& [raw, conn] : connections_)
    if (conn->idle_since(cutoff)) idle.push_back(raw);
  for (TcpConnection* c : idle) {
    stats_.count(TransportCounter::IdleClosed);
    c->close();  // on_closed erases it later, from a posted task
  }
  arm_sweep();
}

void TcpAcceptor::arm_accept() {
  peer_len_ = sizeof peer_;
  loop_.accept(listen_fd_, reinterpret_cast<sockaddr*>(&peer_), &peer_len_, &accept_op_);
}

void TcpAcceptor::on_accept(int result) {
  if (loop_.stopping()) {
    if (result >= 0) ::close(result);
    return;
  }
  if (result < 0) {
    stats_.count(TransportCounter::AcceptErrors);
    if (result == -EMFILE || result == -ENFILE || result == -ENOBUFS || result == -ENOMEM) {
      backoff_ = {0, kBackoffNanos};
      if (loop_.timeout(&backoff_, &backoff_op_)) return;
    }
    return arm_accept();  // ECONNABORTED and friends: the next connection is unaffected
  }
  int fd = result;
  if (limiter_ && !limiter_->admit(peer_)) {
    stats_.count(TransportCounter::ConnectionsRefused);
    ::close(fd);
    return arm_accept();
  }
  int one = 1;
  // Replies are whole records already; waiting to coalesce them only adds latency.
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  CallOrigin origin;
  origin.peer = peer_;
  origin.peer_len = peer_len_;
  origin.tcp = true;
  origin.local_port = port_;
  // The address this connection was made to (the listener may be bound to any address).
  origin.local_len = sizeof origin.local;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&origin.local), &origin.local_len) != 0)
    origin.local_len = 0;
  auto conn = std::make_shared<TcpConnection>(
      loop_, dispatcher_, stats_, fd, origin, limits_, [this](TcpConnection* c) {
        if (limiter_) limiter_->release(c->origin().peer);
        connections_.erase(c);
      });
  connections_.emplace(conn.get(), conn);
  conn->start();
  arm_accept();
}

void TcpAcceptor::on_backoff_done(int) {
  if (!loop_.stopping()) arm_accept();
}

}  // namespace nasd::rpc
