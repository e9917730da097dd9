// Socket set-up shared by the listeners and the tests: numeric address parsing, listening
// TCP and bound UDP sockets. Errors are thrown as std::system_error naming the address.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>

namespace nasd::rpc {

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  uint16_t port() const;
  void set_port(uint16_t port);
  std::string to_string() const;  // "127.0.0.1:2049", "[::1]:2049"
};

// A numeric IPv4 or IPv6 address ("127.0.0.1", "0.0.0.0", "::"). Throws std::invalid_argument.
SocketAddress parse_socket_address(const std::string& host, uint16_t port);
SocketAddress socket_address_of(const sockaddr_storage& storage, socklen_t length);

// SO_REUSEADDR so that a restarted server binds while old connections sit in TIME_WAIT.
int open_tcp_listener(const SocketAddress& address, int backlog = 1024);
int open_udp_socket(const SocketAddress& address);
// The port a bound socket actually got (resolves port 0).
uint16_t bound_port(int fd);

}  // namespace nasd::rpc
