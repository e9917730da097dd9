#include "server/rpc/tcp_connection.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace nasd::rpc {

TcpConnection::TcpConnection(EventLoop& loop, CallDispatcher& dispatcher, CallStats& stats, int fd,
                             CallOrigin origin, TcpLimits limits, ClosedCallback on_closed)
    : loop_(loop),
      dispatcher_(dispatcher),
      stats_(stats),
      fd_(fd),
      origin_(origin),
      limits_(limits),
      on_closed_(std::move(on_closed)),
      reassembler_(limits.max_record),
      recv_buf_(limits.recv_buffer) {
  stats_.count(TransportCounter::ConnectionsAccepted);
  stats_.connection_opened();
}

TcpConnection::~TcpConnection() {
  if (fd_ >= 0) ::close(fd_);
  stats_.count(TransportCounter::ConnectionsClosed);
  stats_.connection_closed();
}

void TcpConnection::start() { arm_recv(); }

void TcpConnection::arm_recv() {
  if (recv_pending_ || closing_ || peer_closed_ || reading_paused()) return;
  // The rest of a large fragment goes straight into its record; anything else (headers, small
  // calls, several pipelined calls at once) into the staging buffer.
  std::span<uint8_t> window = reassembler_.body_window(kReceiveInPlaceMin);
  recv_in_place_ = !window.empty();
  if (recv_in_place_)
    recv_pending_ = loop_.recv(fd_, window.data(), window.size(), &recv_op_);
  else
    recv_pending_ = loop_.recv(fd_, recv_buf_.data(), recv_buf_.size(), &recv_op_);
}

void TcpConnection::on_recv(int result) {
  recv_pending_ = false;
  if (closing_) return finish_if_idle();
  if (result == -EINTR || result == -EAGAIN) return arm_recv();
  if (result <= 0) {
    // EOF or reset. Calls already received still get their replies when the peer only
    // half-closed; a reset makes the sends fail and close the connection anyway.
    peer_closed_ = true;
    if (result < 0 || in_flight_ == 0) return close();
    dispatch_ready_records();
    return;
  }
  stats_.count(TransportCounter::BytesReceived, static_cast<uint64_t>(result));
  last_activity_ = std::chrono::steady_clock::now();
  if (recv_in_place_) {
    reassembler_.body_received(static_cast<size_t>(result));
  } else if (!reassembler_.feed({recv_buf_.data(), static_cast<size_t>(result)})) {
    stats_.count(TransportCounter::OversizedRecords);
    return close();
  }
  dispatch_ready_records();
  arm_recv();
}

void TcpConnection::dispatch_ready_records() {
  while (!closing_ && !reading_paused() && reassembler_.has_record()) {
    stats_.count(TransportCounter::TcpRecords);
    std::weak_ptr<TcpConnection> weak = weak_from_this();
    EventLoop* loop = &loop_;
    auto outcome = dispatcher_.handle(
        reassembler_.pop_record(), origin_, CallDispatcher::Clock::now(),
        [weak, loop](CallDispatcher::Reply reply) {
          loop->post([weak, reply = std::move(reply)]() mutable {
            if (auto self = weak.lock()) self->deliver(std::move(reply));
          });
        });
    switch (outcome.kind) {
      case CallDispatcher::Outcome::Close:
        return close();
      case CallDispatcher::Outcome::Drop:
        break;
      case CallDispatcher::Outcome::Pending:
        ++in_flight_;
        break;
      case CallDispatcher::Outcome::SendNow:
        ++in_flight_;
        deliver(std::move(outcome.reply));
        break;
    }
  }
}

void TcpConnection::deliver(CallDispatcher::Reply reply) {
  if (closing_) return;
  send_queue_.push_back(std::move(reply));
  arm_send();
}

void TcpConnection::arm_send() {
  if (send_pending_ || closing_ || send_queue_.empty()) return;
  size_t n = 0;
  size_t skip = front_offset_;
  // Gathers the queued replies' pieces, skipping what the last short write sent. Stopping at
  // any piece is fine: on_send() accounts by bytes, whatever the iovec held.
  auto add = [&](std::span<const uint8_t> part) {
    if (n == kMaxIov) return false;
    if (skip >= part.size()) {
      skip -= part.size();
      return true;
    }
    iov_[n].iov_base = const_cast<uint8_t*>(part.data() + skip);
    iov_[n].iov_len = part.size() - skip;
    skip = 0;
    ++n;
    return true;
  };
  for (const auto& reply : send_queue_) {
    if (!add(reply->tcp_head()) || !add(reply->body)) break;
    bool room = true;
    for (auto part : reply->tail.parts)
      if (!(room = add(part))) break;
    if (!room) break;
  }
  send_msg_ = {};
  send_msg_.msg_iov = iov_;
  send_msg_.msg_iovlen = n;
  send_pending_ = loop_.sendmsg(fd_, &send_msg_, MSG_NOSIGNAL, &send_op_);
}

void TcpConnection::on_send(int result) {
  send_pending_ = false;
  if (closing_) return finish_if_idle();
  if (result == -EINTR || result == -EAGAIN) return arm_send();
  if (result < 0) return close();
  stats_.count(TransportCounter::BytesSent, static_cast<uint64_t>(result));
  last_activity_ = std::chrono::steady_clock::now();
  // A short write leaves the rest of the front reply (and those behind it) for the next send.
  size_t sent = static_cast<size_t>(result);
  while (sent > 0 && !send_queue_.empty()) {
    size_t left = send_queue_.front()->tcp_size() - front_offset_;
    if (sent < left) {
      front_offset_ += sent;
      stats_.count(TransportCounter::ShortWrites);
      break;
    }
    sent -= left;
    front_offset_ = 0;
    send_queue_.pop_front();
    --in_flight_;
    stats_.count(TransportCounter::RepliesSent);
  }
  arm_send();
  if (peer_closed_) {
    dispatch_ready_records();
    if (in_flight_ == 0) return close();
    return;
  }
  // Room again under the in-flight bound: first the records already buffered, then the socket.
  dispatch_ready_records();
  arm_recv();
}

void TcpConnection::close() {
  if (closing_) return;
  closing_ = true;
  // Makes a pending recv/send complete promptly; the fd is closed only once they have.
  ::shutdown(fd_, SHUT_RDWR);
  finish_if_idle();
}

void TcpConnection::finish_if_idle() {
  if (finished_ || recv_pending_ || send_pending_) return;
  finished_ = true;
  send_queue_.clear();  // only now: a pending sendmsg may have been reading these buffers
  ::close(fd_);
  fd_ = -1;
  // The owner drops its reference from a posted task: this object may not vanish while one
  // of its own member functions is still on the stack.
  if (on_closed_) loop_.post([self = shared_from_this(), cb = on_closed_] { cb(self.get()); });
}

}  // namespace nasd::rpc
