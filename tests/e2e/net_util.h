// Socket helpers shared by the harness and the raw-socket tests. The port-only forms talk to
// 127.0.0.1 (the server a test starts itself); the forms with a host reach a server the suite
// was pointed at (NASD_E2E_TARGET, e2e_target.h), e.g. one node of a cluster on 127.0.1.3, or
// another loopback address of a test's own namespace.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace nasd::e2e {

// A port that was free on 127.0.0.1 (TCP and UDP) a moment ago, outside the kernel's
// ephemeral range, so that no outgoing connection can take it before the server binds it.
uint16_t pick_free_port();
// Distinct free ports, usable together.
void pick_free_ports(uint16_t* a, uint16_t* b);

// True once a TCP connect to 127.0.0.1:port (host:port) succeeds.
bool tcp_port_open(uint16_t port);
bool tcp_port_open(const std::string& host, uint16_t port);

// Owns a socket descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept { reset(o.release()); return *this; }
  int get() const { return fd_; }
  int release() { int f = fd_; fd_ = -1; return f; }
  void reset(int fd = -1);
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Connected TCP / UDP sockets to 127.0.0.1:port (host:port, an IPv4 literal); throw on failure.
Fd tcp_connect(uint16_t port);
Fd tcp_connect(const std::string& host, uint16_t port);
// As tcp_connect, from a chosen source: another loopback address ("127.0.0.2", so a test can be
// a host no export lists) and/or a source port (0: any). reserved_port picks a free port below
// 1024, as a root NFS client does (needs root); it throws when none is free.
Fd tcp_connect_from(uint16_t port, const std::string& source_address, uint16_t source_port = 0);
Fd tcp_connect_reserved(uint16_t port, const std::string& source_address = "127.0.0.1");
Fd udp_connect(uint16_t port);
Fd udp_connect(const std::string& host, uint16_t port);
// A UDP socket to 127.0.0.1:port from another loopback address (another client host).
Fd udp_connect_from(uint16_t port, const std::string& source_address);

// Sends all bytes (throws on error). Returns false if the peer has closed the connection.
bool send_all(int fd, const void* data, size_t len);

// Reads exactly `len` bytes within `timeout`. Returns false on timeout, EOF or reset.
bool recv_exact(int fd, void* data, size_t len, std::chrono::milliseconds timeout);

// Waits up to `timeout` for the peer to close the connection (EOF or reset), discarding any
// bytes that arrive first. False when the connection is still open at the deadline.
bool wait_for_close(int fd, std::chrono::milliseconds timeout);

}  // namespace nasd::e2e
