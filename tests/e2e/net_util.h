// Loopback socket helpers shared by the harness and the raw-socket tests. Everything here talks
// to 127.0.0.1 only.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace nasd::e2e {

// A port that was free on 127.0.0.1 a moment ago (bound with port 0 and released).
uint16_t pick_free_port();
// Distinct free ports, usable together.
void pick_free_ports(uint16_t* a, uint16_t* b);

// True once a TCP connect to 127.0.0.1:port succeeds.
bool tcp_port_open(uint16_t port);

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

// Connected TCP / UDP sockets to 127.0.0.1:port; throw on failure.
Fd tcp_connect(uint16_t port);
Fd udp_connect(uint16_t port);

// Sends all bytes (throws on error). Returns false if the peer has closed the connection.
bool send_all(int fd, const void* data, size_t len);

// Reads exactly `len` bytes within `timeout`. Returns false on timeout, EOF or reset.
bool recv_exact(int fd, void* data, size_t len, std::chrono::milliseconds timeout);

// Waits up to `timeout` for the peer to close the connection (EOF or reset), discarding any
// bytes that arrive first. False when the connection is still open at the deadline.
bool wait_for_close(int fd, std::chrono::milliseconds timeout);

}  // namespace nasd::e2e
