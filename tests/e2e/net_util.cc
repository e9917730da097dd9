#include "tests/e2e/net_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <stdexcept>
#include <utility>

#include "util/net.h"

namespace nasd::e2e {
namespace {

constexpr const char* kLoopback = "127.0.0.1";

// host must be an IPv4 literal (the harness never resolves names).
sockaddr_in address_of(const std::string& host, uint16_t port) {
  util::SocketAddress parsed;
  std::string error;
  if (!util::parse_socket_address(host, port, &parsed, &error) || parsed.family() != AF_INET)
    throw std::runtime_error("not an IPv4 address: " + host);
  return *reinterpret_cast<const sockaddr_in*>(parsed.get());
}

sockaddr_in loopback(uint16_t port) { return address_of(kLoopback, port); }

std::runtime_error sys_error(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

// The kernel's ephemeral range (ip_local_port_range): every connect() without a bind, and
// every bind to port 0, takes its local port from there.
std::pair<uint16_t, uint16_t> ephemeral_range() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  unsigned lo = 32768, hi = 60999;
  if (!(in >> lo >> hi) || lo > hi || hi > 65535) lo = 32768, hi = 60999;
  return {static_cast<uint16_t>(lo), static_cast<uint16_t>(hi)};
}

// Whether 127.0.0.1:port can be bound now, over TCP and over UDP (the servers take both).
bool bindable(uint16_t port) {
  for (int type : {SOCK_STREAM, SOCK_DGRAM}) {
    Fd fd(socket(AF_INET, type, 0));
    if (!fd) throw sys_error("socket");
    sockaddr_in sa = loopback(port);
    if (bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return false;
  }
  return true;
}

// A port outside the ephemeral range that was free a moment ago. Why outside: a port the
// kernel handed out as ephemeral can be handed out again, to any outgoing connection of the
// tests running beside this one, before the server this port is for has bound it (seen as
// "Address already in use" at a server's start in a full parallel suite). Picks are random,
// so tests started together rarely pick alike; `avoid` keeps one caller's picks distinct.
uint16_t pick_outside_ephemeral(uint16_t avoid) {
  static std::mutex mu;
  static std::mt19937 rng(std::random_device{}() ^ static_cast<unsigned>(getpid()));
  const auto [lo, hi] = ephemeral_range();
  std::lock_guard lk(mu);
  std::uniform_int_distribution<int> any(10000, 65000);
  for (int attempt = 0; attempt < 2000; ++attempt) {
    const auto port = static_cast<uint16_t>(any(rng));
    if ((port >= lo && port <= hi) || port == avoid) continue;
    if (bindable(port)) return port;
  }
  throw std::runtime_error("no free port outside the ephemeral range");
}

}  // namespace

void Fd::reset(int fd) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
}

uint16_t pick_free_port() { return pick_outside_ephemeral(0); }

void pick_free_ports(uint16_t* a, uint16_t* b) {
  *a = pick_outside_ephemeral(0);
  *b = pick_outside_ephemeral(*a);
}

bool tcp_port_open(uint16_t port) { return tcp_port_open(kLoopback, port); }

bool tcp_port_open(const std::string& host, uint16_t port) {
  Fd fd(socket(AF_INET, SOCK_STREAM, 0));
  if (!fd) return false;
  sockaddr_in sa = address_of(host, port);
  return connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
}

Fd tcp_connect(uint16_t port) { return tcp_connect(kLoopback, port); }

Fd tcp_connect(const std::string& host, uint16_t port) {
  Fd fd(socket(AF_INET, SOCK_STREAM, 0));
  if (!fd) throw sys_error("socket");
  sockaddr_in sa = address_of(host, port);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
    throw sys_error("connect " + host + ":" + std::to_string(port));
  int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

Fd tcp_connect_from(uint16_t port, const std::string& source_address, uint16_t source_port) {
  Fd fd(socket(AF_INET, SOCK_STREAM, 0));
  if (!fd) throw sys_error("socket");
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in src{};
  src.sin_family = AF_INET;
  src.sin_port = htons(source_port);
  if (inet_pton(AF_INET, source_address.c_str(), &src.sin_addr) != 1)
    throw std::runtime_error("bad source address " + source_address);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&src), sizeof src) != 0)
    throw sys_error("bind " + source_address + ":" + std::to_string(source_port));
  sockaddr_in sa = loopback(port);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
    throw sys_error("connect 127.0.0.1:" + std::to_string(port));
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

Fd tcp_connect_reserved(uint16_t port, const std::string& source_address) {
  for (uint16_t p = 1023; p >= 600; --p) {
    try {
      return tcp_connect_from(port, source_address, p);
    } catch (const std::runtime_error&) {
      // in use (or in TIME_WAIT towards this server): the next one
    }
  }
  throw std::runtime_error("no free reserved port between 600 and 1023");
}

Fd udp_connect(uint16_t port) { return udp_connect(kLoopback, port); }

Fd udp_connect(const std::string& host, uint16_t port) {
  Fd fd(socket(AF_INET, SOCK_DGRAM, 0));
  if (!fd) throw sys_error("socket");
  sockaddr_in sa = address_of(host, port);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
    throw sys_error("connect udp " + host + ":" + std::to_string(port));
  return fd;
}

Fd udp_connect_from(uint16_t port, const std::string& source_address) {
  Fd fd(socket(AF_INET, SOCK_DGRAM, 0));
  if (!fd) throw sys_error("socket");
  sockaddr_in local = address_of(source_address, 0);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&local), sizeof local) != 0)
    throw sys_error("bind udp " + source_address);
  sockaddr_in sa = loopback(port);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
    throw sys_error("connect udp 127.0.0.1:" + std::to_string(port));
  return fd;
}

bool send_all(int fd, const void* data, size_t len) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE || errno == ECONNRESET) return false;
      throw sys_error("send");
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

bool recv_exact(int fd, void* data, size_t len, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  char* p = static_cast<char*>(data);
  while (len > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{fd, POLLIN, 0};
    int r = poll(&pfd, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    ssize_t n = recv(fd, p, len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

bool wait_for_close(int fd, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  char sink[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd pfd{fd, POLLIN, 0};
    int r = poll(&pfd, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return false;
    ssize_t n = recv(fd, sink, sizeof sink, 0);
    if (n == 0) return true;
    if (n < 0 && errno != EINTR && errno != EAGAIN) return true;  // reset counts as closed
  }
}

}  // namespace nasd::e2e
