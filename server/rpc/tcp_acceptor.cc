#include "server/rpc/tcp_acceptor.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cerrno>

namespace nasd::rpc {
namespace {

constexpr long kBackoffNanos = 100L * 1000 * 1000;  // retry accept after resource exhaustion

}  // namespace

TcpAcceptor::TcpAcceptor(EventLoop& loop, int listen_fd, uint16_t port,
                         CallDispatcher& dispatcher, CallStats& stats, TcpLimits limits)
    : loop_(loop),
      listen_fd_(listen_fd),
      port_(port),
      dispatcher_(dispatcher),
      stats_(stats),
      limits_(limits) {}

TcpAcceptor::~TcpAcceptor() = default;

void TcpAcceptor::start() { arm_accept(); }

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
  int one = 1;
  // Replies are whole records already; waiting to coalesce them only adds latency.
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  CallOrigin origin;
  origin.peer = peer_;
  origin.peer_len = peer_len_;
  origin.tcp = true;
  origin.local_port = port_;
  auto conn = std::make_shared<TcpConnection>(
      loop_, dispatcher_, stats_, fd, origin, limits_,
      [this](TcpConnection* c) { connections_.erase(c); });
  connections_.emplace(conn.get(), conn);
  conn->start();
  arm_accept();
}

void TcpAcceptor::on_backoff_done(int) {
  if (!loop_.stopping()) arm_accept();
}

}  // namespace nasd::rpc
