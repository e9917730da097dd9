#include "cluster/interconnect/socket.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace nasd::interconnect {
namespace {

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

bool resolve(const std::string& host, uint16_t port, sockaddr_in* addr, std::string* error) {
  std::memset(addr, 0, sizeof *addr);
  addr->sin_family = AF_INET;
  addr->sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &addr->sin_addr) != 1) {
    *error = "not an IPv4 address: '" + host + "'";
    return false;
  }
  return true;
}

int poll_ms(std::chrono::milliseconds t) {
  return t.count() < 0 ? -1 : static_cast<int>(t.count());
}

}  // namespace

Socket::Socket(int fd, std::chrono::milliseconds send_timeout) : fd_(fd) {
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  timeval tv{};
  tv.tv_sec = send_timeout.count() / 1000;
  tv.tv_usec = (send_timeout.count() % 1000) * 1000;
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

Socket::~Socket() { ::close(fd_); }

bool Socket::send_all(std::span<const uint8_t> bytes, std::string* error) {
  std::lock_guard lock(write_mu_);
  if (!sealer_) return write_locked(bytes, 0, error);
  // Sealed in the order written, under the same lock: the peer counts frames the same way.
  const link::Tag tag = sealer_->seal({bytes});
  return write_locked(bytes, MSG_MORE, error) && write_locked(tag, 0, error);
}

void Socket::seal_with(link::FrameSealer sealer) {
  std::lock_guard lock(write_mu_);
  sealer_ = std::move(sealer);
}

bool Socket::write_locked(std::span<const uint8_t> bytes, int flags, std::string* error) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL | flags);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                   ? std::string("send timed out: peer is not reading")
                   : errno_text("send");
      // A partial frame is on the wire: the stream is unusable from here on.
      ::shutdown(fd_, SHUT_RDWR);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

void Socket::shutdown() { ::shutdown(fd_, SHUT_RDWR); }

int connect_tcp(const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
                std::string* error) {
  sockaddr_in addr;
  if (!resolve(host, port, &addr, error)) return -1;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *error = errno_text("socket");
    return -1;
  }
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  if (rc < 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    rc = ::poll(&p, 1, poll_ms(timeout));
    if (rc == 0) {
      *error = "connect to " + host + ":" + std::to_string(port) + " timed out";
      ::close(fd);
      return -1;
    }
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    errno = err;
    rc = err == 0 ? 0 : -1;
  }
  if (rc < 0) {
    *error = errno_text(("connect to " + host + ":" + std::to_string(port)).c_str());
    ::close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

int listen_tcp(const std::string& host, uint16_t port, uint16_t* bound_port, std::string* error) {
  sockaddr_in addr;
  if (!resolve(host, port, &addr, error)) return -1;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = errno_text("socket");
    return -1;
  }
  int one = 1;
  // A restarted node must get its port back while old connections sit in TIME_WAIT.
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0 || ::listen(fd, 64) < 0) {
    *error = errno_text(("listen on " + host + ":" + std::to_string(port)).c_str());
    ::close(fd);
    return -1;
  }
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *bound_port = ntohs(addr.sin_port);
  return fd;
}

ReadStatus read_exact(int fd, uint8_t* buf, size_t n, std::chrono::milliseconds first_byte_timeout,
                      std::chrono::milliseconds stall_timeout, std::string* error) {
  size_t done = 0;
  while (done < n) {
    pollfd p{fd, POLLIN, 0};
    int rc = ::poll(&p, 1, poll_ms(done == 0 ? first_byte_timeout : stall_timeout));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) {
      *error = errno_text("poll");
      return ReadStatus::Error;
    }
    if (rc == 0) {
      if (done == 0) {
        *error = "timed out waiting for data";
        return ReadStatus::Timeout;
      }
      *error = "peer stalled mid-frame after " + std::to_string(done) + " of " +
               std::to_string(n) + " bytes";
      return ReadStatus::Error;
    }
    ssize_t got = ::recv(fd, buf + done, n - done, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      *error = errno_text("recv");
      return ReadStatus::Error;
    }
    if (got == 0) {
      if (done == 0) {
        *error = "connection closed by peer";
        return ReadStatus::Eof;
      }
      *error = "connection closed mid-frame after " + std::to_string(done) + " of " +
               std::to_string(n) + " bytes";
      return ReadStatus::Error;
    }
    done += static_cast<size_t>(got);
  }
  return ReadStatus::Ok;
}

}  // namespace nasd::interconnect
