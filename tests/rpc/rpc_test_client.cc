#include "tests/rpc/rpc_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>

#include "util/net.h"

namespace nasd::rpc::testing {

XdrBuilder& XdrBuilder::u32(uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) bytes_.push_back(static_cast<uint8_t>(v >> shift));
  return *this;
}

XdrBuilder& XdrBuilder::opaque(std::span<const uint8_t> bytes) {
  u32(static_cast<uint32_t>(bytes.size()));
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  bytes_.resize(bytes_.size() + (4 - bytes.size() % 4) % 4, 0);
  return *this;
}

XdrBuilder& XdrBuilder::opaque(const std::string& s) {
  return opaque({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
}

XdrBuilder& XdrBuilder::raw(std::span<const uint8_t> bytes) {
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  return *this;
}

std::vector<uint8_t> auth_sys_body(const AuthSysParams& p) {
  XdrBuilder b;
  b.u32(p.stamp).opaque(p.machine).u32(p.uid).u32(p.gid).u32(static_cast<uint32_t>(p.gids.size()));
  for (uint32_t g : p.gids) b.u32(g);
  return b.take();
}

std::vector<uint8_t> make_call(const CallSpec& s) {
  XdrBuilder b;
  b.u32(s.xid).u32(0).u32(s.rpcvers).u32(s.prog).u32(s.vers).u32(s.proc);
  b.u32(s.cred_flavor).opaque(s.cred_body);
  b.u32(0).u32(0);  // AUTH_NONE verifier
  b.raw(s.args);
  return b.take();
}

std::vector<uint8_t> as_record(std::span<const uint8_t> message,
                               const std::vector<size_t>& fragment_sizes) {
  std::vector<uint8_t> out;
  size_t pos = 0;
  auto fragment = [&](size_t n, bool last) {
    uint32_t mark = static_cast<uint32_t>(n) | (last ? 0x80000000u : 0);
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(mark >> shift));
    out.insert(out.end(), message.begin() + pos, message.begin() + pos + n);
    pos += n;
  };
  for (size_t n : fragment_sizes) {
    if (pos + n >= message.size()) break;
    fragment(n, false);
  }
  fragment(message.size() - pos, true);
  return out;
}

uint32_t read_u32(std::span<const uint8_t> b, size_t off) {
  return (uint32_t{b[off]} << 24) | (uint32_t{b[off + 1]} << 16) | (uint32_t{b[off + 2]} << 8) |
         uint32_t{b[off + 3]};
}

ParsedReply parse_reply(std::span<const uint8_t> m) {
  ParsedReply r;
  if (m.size() < 12 || read_u32(m, 4) != 1) return r;
  r.xid = read_u32(m, 0);
  r.reply_stat = read_u32(m, 8);
  size_t pos = 12;
  if (r.reply_stat == 0) {
    if (m.size() < pos + 8) return r;
    uint32_t verf_len = read_u32(m, pos + 4);
    pos += 8 + ((verf_len + 3) & ~3u);
    if (m.size() < pos + 4) return r;
    r.accept_stat = read_u32(m, pos);
    pos += 4;
    if (r.accept_stat == 2) {
      if (m.size() < pos + 8) return r;
      r.low = read_u32(m, pos);
      r.high = read_u32(m, pos + 4);
      pos += 8;
    }
    r.results.assign(m.begin() + pos, m.end());
  } else {
    if (m.size() < pos + 4) return r;
    r.reject_stat = read_u32(m, pos);
    pos += 4;
    if (r.reject_stat == 0) {
      if (m.size() < pos + 8) return r;
      r.low = read_u32(m, pos);
      r.high = read_u32(m, pos + 4);
    } else {
      if (m.size() < pos + 4) return r;
      r.auth_stat = read_u32(m, pos);
    }
  }
  r.ok = true;
  return r;
}

namespace {

sockaddr_in loopback(uint16_t port) {
  return *reinterpret_cast<const sockaddr_in*>(util::parse_socket_address("127.0.0.1", port).get());
}

bool wait_readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  int rc;
  do {
    rc = poll(&p, 1, timeout_ms);
  } while (rc < 0 && errno == EINTR);
  return rc == 1;
}

}  // namespace

TcpTestClient::TcpTestClient(uint16_t port) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sin = loopback(port);
  if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&sin), sizeof sin) < 0) {
    if (fd_ >= 0) close(fd_);
    throw std::runtime_error("test client cannot connect");
  }
}

TcpTestClient::~TcpTestClient() {
  if (fd_ >= 0) close(fd_);
}

bool TcpTestClient::send_all(std::span<const uint8_t> bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

bool TcpTestClient::read_exact(uint8_t* out, size_t n, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  size_t got = 0;
  while (got < n) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0 || !wait_readable(fd_, static_cast<int>(left))) return false;
    ssize_t r = recv(fd_, out + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

std::optional<std::vector<uint8_t>> TcpTestClient::read_record(int timeout_ms) {
  std::vector<uint8_t> record;
  for (;;) {
    uint8_t mark[4];
    if (!read_exact(mark, 4, timeout_ms)) return std::nullopt;
    uint32_t m = read_u32(mark, 0);
    size_t len = m & 0x7fffffffu;
    size_t old = record.size();
    record.resize(old + len);
    if (len && !read_exact(record.data() + old, len, timeout_ms)) return std::nullopt;
    if (m & 0x80000000u) return record;
  }
}

bool TcpTestClient::wait_closed(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0 || !wait_readable(fd_, static_cast<int>(left))) return false;
    uint8_t buf[4096];
    ssize_t r = recv(fd_, buf, sizeof buf, 0);
    if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) return true;
  }
}

UdpTestClient::UdpTestClient(uint16_t port) {
  fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in sin = loopback(port);
  if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&sin), sizeof sin) < 0) {
    if (fd_ >= 0) close(fd_);
    throw std::runtime_error("test client cannot create a UDP socket");
  }
}

UdpTestClient::~UdpTestClient() {
  if (fd_ >= 0) close(fd_);
}

bool UdpTestClient::send(std::span<const uint8_t> d) {
  return ::send(fd_, d.data(), d.size(), 0) == static_cast<ssize_t>(d.size());
}

std::optional<std::vector<uint8_t>> UdpTestClient::receive(int timeout_ms) {
  if (!wait_readable(fd_, timeout_ms)) return std::nullopt;
  std::vector<uint8_t> buf(65536);
  ssize_t n = recv(fd_, buf.data(), buf.size(), 0);
  if (n < 0) return std::nullopt;
  buf.resize(static_cast<size_t>(n));
  return buf;
}

}  // namespace nasd::rpc::testing
