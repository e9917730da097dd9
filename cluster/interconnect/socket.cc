#include "cluster/interconnect/socket.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nasd::interconnect {

Socket::Socket(int fd, std::chrono::milliseconds send_timeout) : fd_(fd) {
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  timeval tv{};
  tv.tv_sec = send_timeout.count() / 1000;
  tv.tv_usec = (send_timeout.count() % 1000) * 1000;
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

Socket::~Socket() { ::close(fd_); }

bool Socket::send_frame_pieces(std::span<const uint8_t> head, std::span<const uint8_t> body,
                               std::string* error) {
  std::unique_lock lock(mu_);
  if (failed_) {
    *error = "connection broken by an earlier failed write";
    return false;
  }
  return send_locked(lock, head, body, error);
}

Socket::TrySend Socket::try_send_frame_pieces(std::span<const uint8_t> head,
                                              std::span<const uint8_t> body, std::string* error) {
  std::unique_lock lock(mu_);
  if (failed_) {
    *error = "connection broken by an earlier failed write";
    return TrySend::Failed;
  }
  if (!writing_) {
    // Nothing sealed yet, so refusing leaves the stream as it was. A socket that polls writable
    // has room for at least a third of its send buffer: far more than the small frames sent
    // this way, so the write below does not wait.
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, 0) != 1 || (p.revents & POLLOUT) == 0) return TrySend::NotNow;
  }
  return send_locked(lock, head, body, error) ? TrySend::Sent : TrySend::Failed;
}

bool Socket::send_locked(std::unique_lock<std::mutex>& lock, std::span<const uint8_t> head,
                         std::span<const uint8_t> body, std::string* error) {
  // Sealed in the order queued, under the same lock: the peer counts frames the same way.
  link::Tag tag{};
  std::span<const uint8_t> tag_bytes;
  if (sealer_) {
    tag = sealer_->seal({head, body});
    tag_bytes = tag;
  }
  if (writing_) {  // the sender under way writes it with whatever else queued up meanwhile
    queue_.insert(queue_.end(), head.begin(), head.end());
    queue_.insert(queue_.end(), body.begin(), body.end());
    queue_.insert(queue_.end(), tag_bytes.begin(), tag_bytes.end());
    ++queued_frames_;
    return true;
  }
  writing_ = true;
  lock.unlock();
  bool ok = write_pieces(head, body, tag_bytes, error);
  lock.lock();
  ++frames_sent_;
  ++writes_;
  ok = drain_locked(lock, ok);
  if (!ok && error->empty()) *error = "connection broken by a failed write";
  return ok;
}

void Socket::begin_batch() {
  std::lock_guard lock(mu_);
  if (writing_ || failed_) return;  // the sender under way writes what queues meanwhile
  writing_ = true;
  batching_ = true;
}

void Socket::end_batch() {
  std::unique_lock lock(mu_);
  if (!batching_) return;
  batching_ = false;
  drain_locked(lock, true);
}

bool Socket::drain_locked(std::unique_lock<std::mutex>& lock, bool ok) {
  while (ok && !queue_.empty()) {
    std::vector<uint8_t> batch;
    batch.swap(queue_);
    const uint64_t frames = queued_frames_;
    queued_frames_ = 0;
    lock.unlock();
    std::string batch_error;
    ok = write_pieces(batch, {}, {}, &batch_error);
    lock.lock();
    frames_sent_ += frames;
    ++writes_;
  }
  writing_ = false;
  if (!ok) {
    failed_ = true;
    queue_.clear();
    queued_frames_ = 0;
  }
  return ok;
}

uint64_t Socket::frames_sent() const {
  std::lock_guard lock(mu_);
  return frames_sent_;
}

uint64_t Socket::writes() const {
  std::lock_guard lock(mu_);
  return writes_;
}

void Socket::seal_with(link::FrameSealer sealer) {
  std::lock_guard lock(mu_);
  sealer_ = std::move(sealer);
}

bool Socket::write_pieces(std::span<const uint8_t> a, std::span<const uint8_t> b,
                          std::span<const uint8_t> c, std::string* error) {
  iovec iov[3];
  int count = 0;
  for (std::span<const uint8_t> piece : {a, b, c}) {
    if (!piece.empty()) iov[count++] = {const_cast<uint8_t*>(piece.data()), piece.size()};
  }
  int first = 0;
  while (first < count) {
    msghdr msg{};
    msg.msg_iov = iov + first;
    msg.msg_iovlen = static_cast<size_t>(count - first);
    ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = n < 0 ? std::string("send: ") + std::strerror(errno) : "send: wrote nothing";
      // A partial frame may be on the wire: the stream is unusable from here on.
      ::shutdown(fd_, SHUT_RDWR);
      return false;
    }
    size_t done = static_cast<size_t>(n);
    while (first < count && done >= iov[first].iov_len) {
      done -= iov[first].iov_len;
      ++first;
    }
    if (first < count) {
      iov[first].iov_base = static_cast<uint8_t*>(iov[first].iov_base) + done;
      iov[first].iov_len -= done;
    }
  }
  return true;
}

void Socket::shutdown() { ::shutdown(fd_, SHUT_RDWR); }

void Socket::reset_when_closed() {
  linger hard{1, 0};
  setsockopt(fd_, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
}

void Socket::abort() {
  // Set before the shutdown: the close that follows (when the last owner lets go) then resets
  // the connection and purges its send queue, whatever state the shutdown left it in.
  linger hard{1, 0};
  setsockopt(fd_, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  ::shutdown(fd_, SHUT_RDWR);
}

}  // namespace nasd::interconnect
