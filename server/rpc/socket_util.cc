#include "server/rpc/socket_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace nasd::rpc {

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

SocketAddress parse_socket_address(const std::string& host, uint16_t port) {
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
    throw std::invalid_argument("not a numeric IP address: '" + host + "'");
  }
  a.set_port(port);
  return a;
}

SocketAddress socket_address_of(const sockaddr_storage& storage, socklen_t length) {
  SocketAddress a;
  std::memcpy(&a.storage, &storage, sizeof storage);
  a.length = length;
  return a;
}

namespace {

int bound_socket(const SocketAddress& address, int type) {
  int fd = socket(address.storage.ss_family, type | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (address.storage.ss_family == AF_INET6)
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (bind(fd, address.get(), address.length) < 0) {
    int err = errno;
    close(fd);
    throw std::system_error(err, std::generic_category(), "bind " + address.to_string());
  }
  return fd;
}

}  // namespace

int open_tcp_listener(const SocketAddress& address, int backlog) {
  int fd = bound_socket(address, SOCK_STREAM);
  if (listen(fd, backlog) < 0) {
    int err = errno;
    close(fd);
    throw std::system_error(err, std::generic_category(), "listen " + address.to_string());
  }
  return fd;
}

int open_udp_socket(const SocketAddress& address) {
  int fd = bound_socket(address, SOCK_DGRAM);
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

}  // namespace nasd::rpc
