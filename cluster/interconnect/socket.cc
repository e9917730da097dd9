#include "cluster/interconnect/socket.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

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

bool Socket::send_all(std::span<const uint8_t> bytes, std::string* error) {
  std::lock_guard lock(write_mu_);
  if (util::send_all(fd_, bytes.data(), bytes.size(), error)) return true;
  // A partial frame may be on the wire: the stream is unusable from here on.
  ::shutdown(fd_, SHUT_RDWR);
  return false;
}

void Socket::shutdown() { ::shutdown(fd_, SHUT_RDWR); }

}  // namespace nasd::interconnect
