// Socket helpers shared by every room that talks TCP or UDP (the RPC transport, the cluster
// interconnect, the NVRAM mirror link). IPv4 and IPv6 alike: every host is a numeric address
// ("127.0.0.1", "::1", "0.0.0.0", "::"); names are never resolved, so no call here waits on DNS.
//
// Errors (the rule of util/README.md): the helpers used while serving return false / -1 /
// a ReadStatus and say why in `*error`; the listener helpers used at start-up
// (open_tcp_listener, open_udp_socket) throw std::system_error naming the address, because a
// listener that cannot bind is a configuration error the caller reports and stops on.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace nasd::util {

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  int family() const { return storage.ss_family; }
  uint16_t port() const;
  void set_port(uint16_t port);
  std::string to_string() const;  // "127.0.0.1:2049", "[::1]:2049"
};

// A numeric IPv4 or IPv6 address. Throws std::invalid_argument.
SocketAddress parse_socket_address(const std::string& host, uint16_t port);
// The same without throwing: false (and *error) when `host` is not a numeric address.
bool parse_socket_address(const std::string& host, uint16_t port, SocketAddress* out,
                          std::string* error);
SocketAddress socket_address_of(const sockaddr_storage& storage, socklen_t length);

// "127.0.0.1:7070" or "[::1]:7070" -> host ("::1", without brackets) and port. False on a
// malformed address.
bool split_host_port(const std::string& address, std::string* host, uint16_t* port);

// Start-up listeners. SO_REUSEADDR so that a restarted server binds while old connections sit
// in TIME_WAIT; an IPv6 socket is IPV6_V6ONLY (serve both families with two addresses).
int open_tcp_listener(const SocketAddress& address, int backlog = 1024);
int open_udp_socket(const SocketAddress& address);
// The port a bound socket actually got (resolves port 0); 0 on error.
uint16_t bound_port(int fd);

// "", "0.0.0.0" or "::": no particular address of this host (a listener on all of them, or a
// source left to the kernel).
bool is_any_address(const std::string& host);

// Listening TCP socket on host:port (port 0 picks one; `*bound_port` is the real one), or -1
// with `*error` naming the address.
int listen_tcp(const std::string& host, uint16_t port, uint16_t* bound_port, std::string* error,
               int backlog = 64);
// Blocking connect with a deadline (negative: the system's own). The socket returned is
// blocking, TCP_NODELAY and close-on-exec; -1 with `*error` on failure or timeout.
// `source` (an address of this host, any port) is where the connection leaves from; empty,
// "0.0.0.0" or "::": the kernel's choice. Cluster links leave from the node's own address, so
// that the node is one address on the network (firewall rules, allowed_peers, a partition).
int connect_tcp(const std::string& host, uint16_t port, std::chrono::milliseconds timeout,
                std::string* error, const std::string& source = {});

// Writes all bytes (retrying EINTR and short writes; never SIGPIPE), with `flags` added to
// send(2)'s (MSG_MORE: more follows at once). False when the peer is
// gone or, with SO_SNDTIMEO set, stopped reading; `*error` (when given) says which.
bool send_all(int fd, const void* data, size_t n, std::string* error = nullptr, int flags = 0);

// Waits up to `timeout` for `fd` to become readable (negative: forever). False on timeout or
// error.
bool wait_readable(int fd, std::chrono::milliseconds timeout);

enum class ReadStatus { Ok, Eof, Timeout, Error };

// Reads exactly `n` bytes. Waits at most `first_byte_timeout` for the first byte (negative:
// forever) and at most `stall_timeout` for each later one, so a peer that sends half a message
// and goes quiet is noticed. Eof / Timeout only before the first byte; a stream that ends or
// stalls part-way is an Error (the message is half-read).
ReadStatus read_exact(int fd, uint8_t* buf, size_t n, std::chrono::milliseconds first_byte_timeout,
                      std::chrono::milliseconds stall_timeout, std::string* error);

}  // namespace nasd::util
