#include "server/rpc/udp_endpoint.h"

#include <cerrno>
#include <memory>
#include <vector>

namespace nasd::rpc {
namespace {

constexpr size_t kMaxDatagram = 65536;

}  // namespace

// One reply datagram in flight; owns everything the kernel reads until completion.
struct UdpEndpoint::SendOp final : EventLoop::Completion {
  UdpEndpoint* endpoint = nullptr;
  CallDispatcher::Reply reply;
  sockaddr_storage to{};
  std::vector<iovec> iov;  // head, body, then the tail's pieces
  msghdr msg{};

  void on_complete(int result) override {
    --endpoint->sends_pending_;
    if (result >= 0) {
      endpoint->stats_.count(TransportCounter::RepliesSent);
      endpoint->stats_.count(TransportCounter::BytesSent, static_cast<uint64_t>(result));
    }
    delete this;
  }
};

UdpEndpoint::UdpEndpoint(EventLoop& loop, int fd, uint16_t port, CallDispatcher& dispatcher,
                         CallStats& stats, size_t max_in_flight)
    : loop_(loop),
      fd_(fd),
      port_(port),
      dispatcher_(dispatcher),
      stats_(stats),
      max_in_flight_(max_in_flight),
      buf_(kMaxDatagram) {
  // The address calls arrive at (the wildcard when the socket is bound to any address).
  local_len_ = sizeof local_;
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&local_), &local_len_) != 0) local_len_ = 0;
}

UdpEndpoint::~UdpEndpoint() = default;

void UdpEndpoint::start() { arm_recv(); }

void UdpEndpoint::arm_recv() {
  iov_ = {buf_.data(), buf_.size()};
  msg_ = {};
  msg_.msg_name = &peer_;
  msg_.msg_namelen = sizeof peer_;
  msg_.msg_iov = &iov_;
  msg_.msg_iovlen = 1;
  loop_.recvmsg(fd_, &msg_, &recv_op_);
}

void UdpEndpoint::on_datagram(int result) {
  if (loop_.stopping()) return;
  if (result < 0) return arm_recv();  // e.g. ECONNREFUSED from an earlier reply: not fatal
  stats_.count(TransportCounter::UdpDatagrams);
  stats_.count(TransportCounter::BytesReceived, static_cast<uint64_t>(result));
  if (msg_.msg_flags & MSG_TRUNC) {
    stats_.count(TransportCounter::BadRecords);
    return arm_recv();
  }
  if (in_flight_ >= max_in_flight_) {
    stats_.count(TransportCounter::UdpDropped);
    return arm_recv();
  }
  CallOrigin origin;
  origin.peer = peer_;
  origin.peer_len = msg_.msg_namelen;
  origin.tcp = false;
  origin.local_port = port_;
  origin.local = local_;
  origin.local_len = local_len_;
  Record record(buf_.begin(), buf_.begin() + result);
  auto outcome = dispatcher_.handle(
      std::move(record), origin, CallDispatcher::Clock::now(),
      [this, &origin]() -> CallDispatcher::ReplyCallback {
        return [this, loop = &loop_, origin](CallDispatcher::Reply reply) {
          // The endpoint outlives every task posted to its loop (see RpcServer::stop).
          loop->post([this, origin, reply = std::move(reply)]() mutable {
            --in_flight_;
            send(origin, std::move(reply));
          });
        };
      });
  switch (outcome.kind) {
    case CallDispatcher::Outcome::SendNow:
      send(origin, std::move(outcome.reply));
      break;
    case CallDispatcher::Outcome::Pending:
      ++in_flight_;
      break;
    case CallDispatcher::Outcome::Drop:
    case CallDispatcher::Outcome::Close:  // a datagram has no connection to close
      break;
  }
  arm_recv();
}

void UdpEndpoint::send(const CallOrigin& to, CallDispatcher::Reply reply) {
  auto op = std::make_unique<SendOp>();
  op->endpoint = this;
  op->reply = std::move(reply);
  op->to = to.peer;
  auto head = op->reply->udp_head();
  const auto& tail = op->reply->tail.parts;
  op->iov.reserve(2 + tail.size());
  op->iov.push_back({const_cast<uint8_t*>(head.data()), head.size()});
  if (!op->reply->body.empty())
    op->iov.push_back({const_cast<uint8_t*>(op->reply->body.data()), op->reply->body.size()});
  for (auto part : tail) op->iov.push_back({const_cast<uint8_t*>(part.data()), part.size()});
  op->msg.msg_name = &op->to;
  op->msg.msg_namelen = to.peer_len;
  op->msg.msg_iov = op->iov.data();
  op->msg.msg_iovlen = op->iov.size();
  if (loop_.sendmsg(fd_, &op->msg, 0, op.get())) {
    ++sends_pending_;
    op.release();  // deleted by its own completion
  }
}

}  // namespace nasd::rpc
