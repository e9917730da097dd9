// ONC RPC (RFC 5531) by hand over plain sockets, for tests that must control every byte: call
// headers with chosen xid/program/version/credential, TCP record marking, reply parsing down to
// accept_stat / reject_stat, and the few NFSv3 / MOUNT argument encodings those tests need.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tests/e2e/net_util.h"

namespace nasd::e2e::raw {

inline constexpr uint32_t kNfsProgram = 100003;
inline constexpr uint32_t kMountProgram = 100005;
inline constexpr uint32_t kAuthNone = 0;
inline constexpr uint32_t kAuthSys = 1;

// accept_stat / reject_stat / auth_stat values the tests check.
enum : uint32_t { kSuccess = 0, kProgUnavail = 1, kProgMismatch = 2, kProcUnavail = 3,
                  kGarbageArgs = 4 };
enum : uint32_t { kMsgAccepted = 0, kMsgDenied = 1 };
enum : uint32_t { kRpcMismatch = 0, kAuthError = 1 };
enum : uint32_t { kAuthBadCred = 1 };

// The opaque body of an AUTH_SYS credential.
std::string auth_sys_body(uint32_t uid, uint32_t gid, const std::vector<uint32_t>& gids = {},
                          const std::string& machine = "nasd-e2e", uint32_t stamp = 1);

struct Call {
  uint32_t xid = 1;
  uint32_t prog = kNfsProgram;
  uint32_t vers = 3;
  uint32_t proc = 0;
  uint32_t cred_flavor = kAuthSys;
  std::string cred_body = auth_sys_body(0, 0);
  std::string args;  // already-encoded procedure arguments
};

std::string encode_call(const Call& c);
// One record, sent as a single last fragment.
std::string record_mark(const std::string& message);

struct Reply {
  uint32_t xid = 0;
  uint32_t reply_stat = 0;   // kMsgAccepted / kMsgDenied
  uint32_t accept_stat = 0;  // when accepted
  uint32_t reject_stat = 0;  // when denied
  uint32_t auth_stat = 0;    // when denied with kAuthError
  uint32_t mismatch_low = 0, mismatch_high = 0;  // PROG_MISMATCH / RPC_MISMATCH
  std::string results;       // procedure results after the header (accepted + SUCCESS)
};
// Throws XdrError when the bytes are not an RPC reply.
Reply parse_reply(const std::string& message);

// A TCP connection speaking record-marked RPC.
class TcpConnection {
 public:
  explicit TcpConnection(uint16_t port) : fd_(tcp_connect(port)) {}
  TcpConnection(const std::string& host, uint16_t port) : fd_(tcp_connect(host, port)) {}
  // A connection made elsewhere (tcp_connect_from, tcp_connect_reserved).
  explicit TcpConnection(Fd fd) : fd_(std::move(fd)) {}
  int fd() const { return fd_.get(); }
  // False when the peer already closed the connection.
  bool send_bytes(const std::string& bytes) { return send_all(fd_.get(), bytes.data(), bytes.size()); }
  bool send_call(const Call& c) { return send_bytes(record_mark(encode_call(c))); }
  // One whole record (all fragments), or nullopt on timeout / close.
  std::optional<std::string> receive_record(std::chrono::milliseconds timeout);
  std::optional<Reply> receive_reply(std::chrono::milliseconds timeout);
  std::optional<Reply> call(const Call& c,
                            std::chrono::milliseconds timeout = std::chrono::seconds(10));

 private:
  Fd fd_;
};

// A connected UDP socket: one datagram per call, so the same socket (same client address and
// port) can send a call twice the way a retransmitting client does.
class UdpConnection {
 public:
  explicit UdpConnection(uint16_t port) : fd_(udp_connect(port)) {}
  UdpConnection(const std::string& host, uint16_t port) : fd_(udp_connect(host, port)) {}
  // From a fixed local port: a client that retransmits after the server restarted or failed
  // over still sends from the address and port the reply cache keys its calls by.
  UdpConnection(uint16_t port, uint16_t local_port);
  // A socket made elsewhere (udp_connect_from).
  explicit UdpConnection(Fd fd) : fd_(std::move(fd)) {}
  std::optional<Reply> call(const Call& c,
                            std::chrono::milliseconds timeout = std::chrono::seconds(5));

 private:
  Fd fd_;
};

// One call on a fresh UDP socket.
std::optional<Reply> udp_call(uint16_t port, const Call& c,
                              std::chrono::milliseconds timeout = std::chrono::seconds(5));
std::optional<Reply> udp_call(const std::string& host, uint16_t port, const Call& c,
                              std::chrono::milliseconds timeout = std::chrono::seconds(5));

// Argument encodings.
std::string fh_args(const std::string& fh);  // GETATTR, FSINFO, ... (one nfs_fh3)
std::string dirop_args(const std::string& dir_fh, const std::string& name);  // LOOKUP, REMOVE
std::string create_guarded_args(const std::string& dir_fh, const std::string& name);
std::string mkdir_args(const std::string& dir_fh, const std::string& name);
std::string link_args(const std::string& file_fh, const std::string& dir_fh,
                      const std::string& name);
// The new object's handle in a successful CREATE/MKDIR/SYMLINK/MKNOD reply's results.
std::string created_handle(const std::string& results);
std::string mnt_args(const std::string& path);
std::string rename_args(const std::string& from_dir, const std::string& from_name,
                        const std::string& to_dir, const std::string& to_name);

// The export root via a raw MOUNT call over TCP (throws unless MNT3_OK).
std::string mount_root_fh(uint16_t mount_port, const std::string& path);

// Fresh xids that do not collide across tests in one process.
uint32_t next_xid();

}  // namespace nasd::e2e::raw
