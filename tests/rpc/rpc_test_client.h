// Client-side helpers for the transport tests: building call messages byte by byte (so that
// malformed ones can be built too), record marking them into arbitrary fragments, parsing
// replies, and small blocking TCP/UDP clients with timeouts. Deliberately independent of the
// server's own encoder and decoder.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace nasd::rpc::testing {

class XdrBuilder {
 public:
  XdrBuilder& u32(uint32_t v);
  XdrBuilder& opaque(std::span<const uint8_t> bytes);  // length + bytes + padding
  XdrBuilder& opaque(const std::string& s);
  XdrBuilder& raw(std::span<const uint8_t> bytes);
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t> take() { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

struct AuthSysParams {
  uint32_t stamp = 1;
  std::string machine = "client";
  uint32_t uid = 1000, gid = 1000;
  std::vector<uint32_t> gids;
};
std::vector<uint8_t> auth_sys_body(const AuthSysParams& p);

struct CallSpec {
  uint32_t xid = 1;
  uint32_t rpcvers = 2;
  uint32_t prog = 0, vers = 0, proc = 0;
  uint32_t cred_flavor = 0;
  std::vector<uint8_t> cred_body;
  std::vector<uint8_t> args;
};
std::vector<uint8_t> make_call(const CallSpec& spec);

// Record-marks `message`, cut into fragments of the given sizes; the last fragment carries
// whatever is left (so {} gives a single fragment).
std::vector<uint8_t> as_record(std::span<const uint8_t> message,
                               const std::vector<size_t>& fragment_sizes = {});

struct ParsedReply {
  bool ok = false;  // parsed as a reply at all
  uint32_t xid = 0;
  uint32_t reply_stat = 0;   // 0 accepted, 1 denied
  uint32_t accept_stat = 0;  // when accepted
  uint32_t reject_stat = 0;  // when denied: 0 RPC_MISMATCH, 1 AUTH_ERROR
  uint32_t auth_stat = 0;
  uint32_t low = 0, high = 0;
  std::vector<uint8_t> results;
};
ParsedReply parse_reply(std::span<const uint8_t> message);

uint32_t read_u32(std::span<const uint8_t> bytes, size_t offset);

class TcpTestClient {
 public:
  explicit TcpTestClient(uint16_t port);  // 127.0.0.1; throws on failure
  ~TcpTestClient();
  TcpTestClient(const TcpTestClient&) = delete;
  TcpTestClient& operator=(const TcpTestClient&) = delete;

  bool send_all(std::span<const uint8_t> bytes);
  // One reassembled record, or nullopt on EOF, error or timeout.
  std::optional<std::vector<uint8_t>> read_record(int timeout_ms = 5000);
  // Waits for the server to close the connection (EOF or reset).
  bool wait_closed(int timeout_ms = 5000);
  int fd() const { return fd_; }

 private:
  bool read_exact(uint8_t* out, size_t n, int timeout_ms);
  int fd_ = -1;
};

class UdpTestClient {
 public:
  explicit UdpTestClient(uint16_t port);
  ~UdpTestClient();
  UdpTestClient(const UdpTestClient&) = delete;
  UdpTestClient& operator=(const UdpTestClient&) = delete;

  bool send(std::span<const uint8_t> datagram);
  std::optional<std::vector<uint8_t>> receive(int timeout_ms = 2000);

 private:
  int fd_ = -1;
};

}  // namespace nasd::rpc::testing
