#include "server/rpc/tcp_connection.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "server/rpc/reply_pool.h"

namespace nasd::rpc {
namespace {

// Appends the pieces of `reply`, less its first `*skip` bytes, to iov[*n] .. iov[cap - 1].
// False when the iovec filled up before the reply's end (the pieces that fitted stay there).
// Empty and skipped pieces take no slot.
bool gather_reply(const EncodedReply& reply, iovec* iov, size_t cap, size_t* n, size_t* skip) {
  auto add = [&](std::span<const uint8_t> part) {
    if (*skip >= part.size()) {
      *skip -= part.size();
      return true;
    }
    if (*n == cap) return false;
    iov[*n].iov_base = const_cast<uint8_t*>(part.data() + *skip);
    iov[*n].iov_len = part.size() - *skip;
    *skip = 0;
    ++*n;
    return true;
  };
  if (!add(reply.tcp_head()) || !add(reply.body)) return false;
  for (auto part : reply.tail.parts)
    if (!add(part)) return false;
  return true;
}

}  // namespace

TcpConnection::TcpConnection(EventLoop& loop, CallDispatcher& dispatcher, CallStats& stats, int fd,
                             CallOrigin origin, TcpLimits limits, ClosedCallback on_closed)
    : loop_(loop),
      dispatcher_(dispatcher),
      stats_(stats),
      fd_(fd),
      origin_(origin),
      limits_(limits),
      on_closed_(std::move(on_closed)),
      reassembler_(limits.max_record, dispatcher.payload_locator()),
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
  set_rcvlowat(recv_in_place_ ? window.size() : 1);
  if (recv_in_place_)
    recv_pending_ = loop_.recv(fd_, window.data(), window.size(), &recv_op_);
  else
    recv_pending_ = loop_.recv(fd_, recv_buf_.data(), recv_buf_.size(), &recv_op_);
}

void TcpConnection::set_rcvlowat(size_t bytes) {
  // While a large fragment arrives, the kernel wakes this loop only once the rest of it is in
  // the socket (it grows the receive buffer to fit, and caps the mark itself), instead of at
  // every segment: a 1 MiB WRITE woke the loop about ten times. Back to 1 before any other
  // receive, or a small call would wait for bytes that never come. A mark that cannot be set
  // costs only the wake-ups.
  const int want = static_cast<int>(std::min<size_t>(bytes, kMaxRcvLowat));
  if (want == rcvlowat_) return;
  if (setsockopt(fd_, SOL_SOCKET, SO_RCVLOWAT, &want, sizeof want) == 0) rcvlowat_ = want;
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
  note_activity();
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
    // Counted before the dispatch: a reply sent elsewhere may count it down at once.
    in_flight_.fetch_add(1);
    auto outcome = dispatcher_.handle(
        reassembler_.pop_record(), origin_, CallDispatcher::Clock::now(),
        [this]() -> CallDispatcher::ReplyCallback {
          return [weak = weak_from_this()](CallDispatcher::Reply reply) {
            if (auto self = weak.lock()) self->deliver_from_elsewhere(std::move(reply));
          };
        });
    switch (outcome.kind) {
      case CallDispatcher::Outcome::Close:
        reply_done();
        return close();
      case CallDispatcher::Outcome::Drop:
        reply_done();
        break;
      case CallDispatcher::Outcome::Pending:
        break;
      case CallDispatcher::Outcome::SendNow:
        deliver(std::move(outcome.reply));
        break;
    }
  }
}

void TcpConnection::deliver(CallDispatcher::Reply reply) {
  {
    std::lock_guard lock(send_mu_);
    if (closing_) return;
    send_queue_.push_back(std::move(reply));
  }
  arm_send();
}

void TcpConnection::deliver_from_elsewhere(CallDispatcher::Reply reply) {
  std::unique_lock lock(send_mu_);
  if (closing_) return;  // the loop is closing the connection: the reply is dropped
  if (!send_pending_ && send_queue_.empty()) {
    // Nothing else is being written, and nobody can start while this holds send_mu_: the
    // reply goes out from this thread if the socket takes it whole without waiting.
    constexpr size_t kDirectIov = 64;
    iovec iov[kDirectIov];
    size_t n = 0, skip = 0;
    const size_t total = reply->tcp_size();
    if (gather_reply(*reply, iov, kDirectIov, &n, &skip)) {
      msghdr msg{};
      msg.msg_iov = iov;
      msg.msg_iovlen = n;
      const ssize_t sent = ::sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (sent > 0) {
        stats_.count(TransportCounter::BytesSent, static_cast<uint64_t>(sent));
        note_activity();
      }
      if (sent == static_cast<ssize_t>(total)) {
        lock.unlock();
        stats_.count(TransportCounter::RepliesSent);
        reply_done();
        return;
      }
      // A short write: the loop sends the rest first (nothing else may go in between). A
      // failed one (EAGAIN, or a broken connection) leaves it all to the loop, whose send
      // then waits for room or fails and closes the connection.
      if (sent > 0) {
        front_offset_ = static_cast<size_t>(sent);
        stats_.count(TransportCounter::ShortWrites);
      }
    }
  }
  send_queue_.push_back(std::move(reply));
  const bool loop_sends_already = send_pending_;
  lock.unlock();
  if (loop_sends_already) return;  // on_send() sends what queued up meanwhile
  loop_.post([weak = weak_from_this()] {
    if (auto self = weak.lock()) self->arm_send();
  });
}

void TcpConnection::reply_done(size_t count) {
  // Sequentially consistent, like on_recv's store of peer_closed_ and its load of the count:
  // of the loop seeing no call in flight and this thread seeing the peer closed, at least one
  // happens, so the connection of a half-closed peer is always closed.
  const size_t before = in_flight_.fetch_sub(count);
  const size_t after = before - count;
  // Only the loop acts on the count. It needs waking when reading waits for room under the
  // bound, or when a half-closed peer's last reply has gone (the connection then closes).
  const bool unpaused = before >= limits_.max_in_flight && after < limits_.max_in_flight;
  const bool drained = after == 0 && peer_closed_.load();
  if (!unpaused && !drained) return;
  loop_.post([weak = weak_from_this()] {
    if (auto self = weak.lock()) self->after_replies_sent();
  });
}

void TcpConnection::after_replies_sent() {
  if (closing_) return;
  if (peer_closed_) {
    dispatch_ready_records();
    if (in_flight() == 0) close();
    return;
  }
  // Room again under the in-flight bound: first the records already buffered, then the socket.
  dispatch_ready_records();
  arm_recv();
}

void TcpConnection::note_activity() {
  last_activity_.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                       std::memory_order_relaxed);
}

bool TcpConnection::idle_since(std::chrono::steady_clock::time_point cutoff) const {
  if (in_flight() != 0) return false;
  {
    std::lock_guard lock(send_mu_);
    if (!send_queue_.empty()) return false;
  }
  return last_activity_.load(std::memory_order_relaxed) < cutoff.time_since_epoch().count();
}

void TcpConnection::arm_send() {
  std::lock_guard lock(send_mu_);
  if (send_pending_ || closing_ || send_queue_.empty()) return;
  size_t n = 0;
  size_t skip = front_offset_;
  // Gathers the queued replies' pieces, skipping what the last short write sent. Stopping at
  // any piece is fine: on_send() accounts by bytes, whatever the iovec held.
  for (const auto& reply : send_queue_)
    if (!gather_reply(*reply, iov_, kMaxIov, &n, &skip)) break;
  send_msg_ = {};
  send_msg_.msg_iov = iov_;
  send_msg_.msg_iovlen = n;
  send_pending_ = loop_.sendmsg(fd_, &send_msg_, MSG_NOSIGNAL, &send_op_);
}

void TcpConnection::on_send(int result) {
  size_t replies_sent = 0;
  {
    std::lock_guard lock(send_mu_);
    send_pending_ = false;
    if (!closing_ && result >= 0) {
      // A short write leaves the rest of the front reply (and those behind it) for the next
      // send. Only the front replies were in that send's iovec: others queue at the back.
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
        recycle_reply(std::move(send_queue_.front()));  // on this loop: its next call's reply
        send_queue_.pop_front();
        ++replies_sent;
      }
    }
  }
  if (closing_) return finish_if_idle();
  if (result == -EINTR || result == -EAGAIN) return arm_send();
  if (result < 0) return close();
  stats_.count(TransportCounter::BytesSent, static_cast<uint64_t>(result));
  note_activity();
  if (replies_sent > 0) {
    stats_.count(TransportCounter::RepliesSent, replies_sent);
    in_flight_.fetch_sub(replies_sent);
  }
  arm_send();
  after_replies_sent();
}

void TcpConnection::close() {
  if (closing_) return;
  {
    std::lock_guard lock(send_mu_);
    closing_ = true;
  }
  // Makes a pending recv/send complete promptly; the fd is closed only once they have.
  ::shutdown(fd_, SHUT_RDWR);
  finish_if_idle();
}

void TcpConnection::finish_if_idle() {
  {
    // Under send_mu_: no thread is inside a direct send, and none starts once closing_ is set.
    std::lock_guard lock(send_mu_);
    if (finished_ || recv_pending_ || send_pending_) return;
    finished_ = true;
    send_queue_.clear();  // only now: a pending sendmsg may have been reading these buffers
    ::close(fd_);
    fd_ = -1;
  }
  // The owner drops its reference from a posted task: this object may not vanish while one
  // of its own member functions is still on the stack.
  if (on_closed_) loop_.post([self = shared_from_this(), cb = on_closed_] { cb(self.get()); });
}

}  // namespace nasd::rpc
