#include "util/net.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace nasd::util {
namespace {

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

int poll_ms(std::chrono::milliseconds t) { return t.count() < 0 ? -1 : static_cast<int>(t.count()); }

// A socket of `type` bound to `address`, or -1 with errno set.
int bound_socket(const SocketAddress& address, int type) {
  int fd = ::socket(address.family(), type | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (address.family() == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (::bind(fd, address.get(), address.length) < 0) {
    int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

}  // namespace

uint16_t SocketAddress::port() const {
  if (storage.ss_family == AF_INET)
    return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  if (storage.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  return 0;
}

void SocketAddress::set_port(uint16_t port) {
  if (storage.ss_family == AF_INET)
    reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(port);
  else if (storage.ss_family == AF_INET6)
    reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(port);
}

std::string SocketAddress::to_string() const {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (storage.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, buf, sizeof buf);
    return std::string(buf) + ":" + std::to_string(port());
  }
  if (storage.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, buf,
              sizeof buf);
    return "[" + std::string(buf) + "]:" + std::to_string(port());
  }
  return "?";
}

bool parse_socket_address(const std::string& host, uint16_t port, SocketAddress* out,
                          std::string* error) {
  SocketAddress a;
  auto* sin = reinterpret_cast<sockaddr_in*>(&a.storage);
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(&a.storage);
  if (inet_pton(AF_INET, host.c_str(), &sin->sin_addr) == 1) {
    sin->sin_family = AF_INET;
    a.length = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, host.c_str(), &sin6->sin6_addr) == 1) {
    sin6->sin6_family = AF_INET6;
    a.length = sizeof(sockaddr_in6);
  } else {
    *error = "not a numeric IP address: '" + host + "'";
    return false;
  }
  a.set_port(port);
  *out = a;
  return true;
}

SocketAddress parse_socket_address(const std::string& host, uint16_t port) {
  SocketAddress a;
  std::string error;
  if (!parse_socket_address(host, port, &a, &error)) throw std::invalid_argument(error);
  return a;
}

SocketAddress socket_address_of(const sockaddr_storage& storage, socklen_t length) {
  SocketAddress a;
  std::memcpy(&a.storage, &storage, sizeof storage);
  a.length = length;
  return a;
}

bool split_host_port(const std::string& address, std::string* host, uint16_t* port) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) return false;
  unsigned long p = 0;
  for (size_t i = colon + 1; i < address.size(); ++i) {
    if (address[i] < '0' || address[i] > '9') return false;
    p = p * 10 + static_cast<unsigned long>(address[i] - '0');
    if (p > 65535) return false;
  }
  std::string h = address.substr(0, colon);
  if (h.front() == '[') {  // [v6]:port
    if (h.size() < 3 || h.back() != ']') return false;
    h = h.substr(1, h.size() - 2);
  } else if (h.find(':') != std::string::npos) {
    return false;  // a bare IPv6 address is ambiguous: "::1:80"
  }
  *host = h;
  *port = static_cast<uint16_t>(p);
  return true;
}

int open_tcp_listener(const SocketAddress& address, int backlog) {
  int fd = bound_socket(address, SOCK_STREAM);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "bind " + address.to_string());
  if (::listen(fd, backlog) < 0) {
    int err = errno;
    ::close(fd);
    throw std::system_error(err, std::generic_category(), "listen " + address.to_string());
  }
  return fd;
}

int open_udp_socket(const SocketAddress& address) {
  int fd = bound_socket(address, SOCK_DGRAM);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "bind " + address.to_string());
  // Bursts of NFS calls arrive faster than one recvmsg at a time drains them.
  int bytes = 4 << 20;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
  return fd;
}

uint16_t bound_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) < 0) return 0;
  return socket_address_of(ss, len).port();
}

int listen_tcp(const std::string& host, uint16_t port, uint16_t* bound, std::string* error,
               int backlog) {
  SocketAddress addr;
  if (!parse_socket_address(host, port, &addr, error)) return -1;
  int fd = bound_socket(addr, SOCK_STREAM);
  if (fd < 0 || ::listen(fd, backlog) < 0) {
    *error = errno_text("listen on " + addr.to_string());
    if (fd >= 0) ::close(fd);
    return -1;
  }
  *bound = bound_port(fd);
  return fd;
}

bool is_any_address(const std::string& host) {
  return host.empty() || host == "0.0.0.0" || host == "::";
}

int connect_tcp(const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
                std::string* error, const std::string& source) {
  SocketAddress addr;
  if (!parse_socket_address(host, port, &addr, error)) return -1;
  SocketAddress from;
  const bool bind_source = !is_any_address(source);
  if (bind_source && !parse_socket_address(source, 0, &from, error)) return -1;
  int fd = ::socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *error = errno_text("socket");
    return -1;
  }
  if (bind_source && ::bind(fd, from.get(), from.length) != 0) {
    *error = errno_text("bind to " + from.to_string() + " (the source of a connection to " +
                        addr.to_string() + ")");
    ::close(fd);
    return -1;
  }
  int rc = ::connect(fd, addr.get(), addr.length);
  if (rc < 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    do {
      rc = ::poll(&p, 1, poll_ms(timeout));
    } while (rc < 0 && errno == EINTR);
    if (rc == 0) {
      *error = "connect to " + addr.to_string() + " timed out";
      ::close(fd);
      return -1;
    }
    int err = rc < 0 ? errno : 0;
    socklen_t len = sizeof err;
    if (rc > 0) getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    errno = err;
    rc = err == 0 ? 0 : -1;
  }
  if (rc < 0) {
    *error = errno_text("connect to " + addr.to_string());
    ::close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

bool send_all(int fd, const void* data, size_t n, std::string* error, int flags) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL | flags);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      if (error)
        *error = (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                     ? std::string("send timed out: peer is not reading")
                     : errno_text("send");
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool wait_readable(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  for (;;) {
    int rc = ::poll(&p, 1, poll_ms(timeout));
    if (rc < 0 && errno == EINTR) continue;
    return rc == 1;
  }
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
      *error = "peer stalled mid-message after " + std::to_string(done) + " of " +
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
      *error = "connection closed mid-message after " + std::to_string(done) + " of " +
               std::to_string(n) + " bytes";
      return ReadStatus::Error;
    }
    done += static_cast<size_t>(got);
  }
  return ReadStatus::Ok;
}

}  // namespace nasd::util
