#include "tests/e2e/raw_rpc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <random>
#include <stdexcept>

#include "tests/e2e/xdr_buffer.h"

namespace nasd::e2e::raw {
namespace {
constexpr uint32_t kLastFragment = 0x80000000u;
constexpr uint32_t kRpcVersion = 2;
constexpr uint32_t kCall = 0;
constexpr uint32_t kReply = 1;
constexpr uint32_t kMaxRecord = 4u << 20;  // larger replies than this mean a confused server
}  // namespace

std::string auth_sys_body(uint32_t uid, uint32_t gid, const std::vector<uint32_t>& gids,
                          const std::string& machine, uint32_t stamp) {
  XdrWriter w;
  w.u32(stamp).opaque(machine).u32(uid).u32(gid).u32(static_cast<uint32_t>(gids.size()));
  for (uint32_t g : gids) w.u32(g);
  return w.bytes();
}

std::string encode_call(const Call& c) {
  XdrWriter w;
  w.u32(c.xid).u32(kCall).u32(kRpcVersion).u32(c.prog).u32(c.vers).u32(c.proc);
  w.u32(c.cred_flavor).opaque(c.cred_body);
  w.u32(kAuthNone).opaque("");  // verifier
  w.raw(c.args);
  return w.bytes();
}

std::string record_mark(const std::string& message) {
  XdrWriter w;
  w.u32(kLastFragment | static_cast<uint32_t>(message.size())).raw(message);
  return w.bytes();
}

Reply parse_reply(const std::string& message) {
  XdrReader r(message);
  Reply out;
  out.xid = r.u32();
  if (r.u32() != kReply) throw XdrError("not an RPC reply");
  out.reply_stat = r.u32();
  if (out.reply_stat == kMsgAccepted) {
    r.u32();            // verifier flavor
    r.opaque(400);      // verifier body
    out.accept_stat = r.u32();
    if (out.accept_stat == kProgMismatch) {
      out.mismatch_low = r.u32();
      out.mismatch_high = r.u32();
    }
    out.results = std::string(r.rest());
  } else if (out.reply_stat == kMsgDenied) {
    out.reject_stat = r.u32();
    if (out.reject_stat == kRpcMismatch) {
      out.mismatch_low = r.u32();
      out.mismatch_high = r.u32();
    } else {
      out.auth_stat = r.u32();
    }
  } else {
    throw XdrError("reply_stat " + std::to_string(out.reply_stat));
  }
  return out;
}

std::optional<std::string> TcpConnection::receive_record(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string record;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    unsigned char mark[4];
    if (left.count() <= 0 || !recv_exact(fd_.get(), mark, 4, left)) return std::nullopt;
    uint32_t word = (uint32_t{mark[0]} << 24) | (uint32_t{mark[1]} << 16) |
                    (uint32_t{mark[2]} << 8) | mark[3];
    uint32_t len = word & ~kLastFragment;
    if (record.size() + len > kMaxRecord)
      throw XdrError("server sent a record of more than " + std::to_string(kMaxRecord) + " bytes");
    size_t at = record.size();
    record.resize(at + len);
    left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (len > 0 && !recv_exact(fd_.get(), record.data() + at, len, left)) return std::nullopt;
    if (word & kLastFragment) return record;
  }
}

std::optional<Reply> TcpConnection::receive_reply(std::chrono::milliseconds timeout) {
  auto rec = receive_record(timeout);
  if (!rec) return std::nullopt;
  return parse_reply(*rec);
}

std::optional<Reply> TcpConnection::call(const Call& c, std::chrono::milliseconds timeout) {
  if (!send_call(c)) return std::nullopt;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {  // skip late replies to earlier (retransmitted) calls
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    auto r = receive_reply(left);
    if (!r || r->xid == c.xid) return r;
  }
}

UdpConnection::UdpConnection(uint16_t port, uint16_t local_port) {
  Fd fd(socket(AF_INET, SOCK_DGRAM, 0));
  if (!fd) throw std::runtime_error("socket");
  int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  local.sin_port = htons(local_port);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&local), sizeof local) != 0)
    throw std::runtime_error("bind udp 127.0.0.1:" + std::to_string(local_port));
  sockaddr_in peer = local;
  peer.sin_port = htons(port);
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&peer), sizeof peer) != 0)
    throw std::runtime_error("connect udp 127.0.0.1:" + std::to_string(port));
  fd_ = std::move(fd);
}

std::optional<Reply> UdpConnection::call(const Call& c, std::chrono::milliseconds timeout) {
  std::string msg = encode_call(c);
  if (send(fd_.get(), msg.data(), msg.size(), 0) != static_cast<ssize_t>(msg.size()))
    return std::nullopt;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string buf(65536, '\0');
  for (;;) {  // skip stray datagrams (e.g. a late reply to an earlier xid)
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd pfd{fd_.get(), POLLIN, 0};
    if (left.count() <= 0 || poll(&pfd, 1, static_cast<int>(left.count())) <= 0)
      return std::nullopt;
    ssize_t n = recv(fd_.get(), buf.data(), buf.size(), 0);
    if (n <= 0) return std::nullopt;
    Reply r = parse_reply(buf.substr(0, static_cast<size_t>(n)));
    if (r.xid == c.xid) return r;
  }
}

std::optional<Reply> udp_call(uint16_t port, const Call& c, std::chrono::milliseconds timeout) {
  return UdpConnection(port).call(c, timeout);
}

std::optional<Reply> udp_call(const std::string& host, uint16_t port, const Call& c,
                              std::chrono::milliseconds timeout) {
  return UdpConnection(host, port).call(c, timeout);
}

std::string fh_args(const std::string& fh) { return XdrWriter().opaque(fh).bytes(); }

std::string dirop_args(const std::string& dir_fh, const std::string& name) {
  return XdrWriter().opaque(dir_fh).opaque(name).bytes();
}

std::string create_guarded_args(const std::string& dir_fh, const std::string& name) {
  XdrWriter w;
  w.opaque(dir_fh).opaque(name);
  w.u32(1);  // createmode3 GUARDED
  // sattr3: set mode 0644, leave uid/gid/size/atime/mtime alone.
  w.u32(1).u32(0644).u32(0).u32(0).u32(0).u32(0).u32(0);
  return w.bytes();
}

std::string mkdir_args(const std::string& dir_fh, const std::string& name) {
  XdrWriter w;
  w.opaque(dir_fh).opaque(name);
  w.u32(1).u32(0755).u32(0).u32(0).u32(0).u32(0).u32(0);  // sattr3: mode only
  return w.bytes();
}

std::string link_args(const std::string& file_fh, const std::string& dir_fh,
                      const std::string& name) {
  return XdrWriter().opaque(file_fh).opaque(dir_fh).opaque(name).bytes();
}

std::string created_handle(const std::string& results) {
  XdrReader r(results);
  if (r.u32() != 0) throw XdrError("not a successful reply");
  if (r.u32() != 1) throw XdrError("no handle in the reply");
  return r.opaque(64);
}

std::string rename_args(const std::string& from_dir, const std::string& from_name,
                        const std::string& to_dir, const std::string& to_name) {
  XdrWriter w;
  w.opaque(from_dir).opaque(from_name).opaque(to_dir).opaque(to_name);
  return w.bytes();
}

std::string mnt_args(const std::string& path) { return XdrWriter().opaque(path).bytes(); }

std::string mount_root_fh(uint16_t mount_port, const std::string& path) {
  TcpConnection conn(mount_port);
  Call c;
  c.xid = next_xid();
  c.prog = kMountProgram;
  c.proc = 1;  // MNT
  c.args = mnt_args(path);
  auto reply = conn.call(c);
  if (!reply || reply->reply_stat != kMsgAccepted || reply->accept_stat != kSuccess)
    throw std::runtime_error("raw MNT " + path + " got no successful reply");
  XdrReader r(reply->results);
  uint32_t status = r.u32();
  if (status != 0) throw std::runtime_error("raw MNT " + path + ": status " + std::to_string(status));
  return r.opaque(64);
}

uint32_t next_xid() {
  static std::atomic<uint32_t> xid{std::random_device{}() | 1u};
  return xid.fetch_add(1);
}

}  // namespace nasd::e2e::raw
