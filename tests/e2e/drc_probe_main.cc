// nasd-drc-probe: the client side of the reply-cache-moves-with-the-data tests in an HA pair
// (drc_failover_test.sh). `send` makes one CREATE (guarded), MKDIR, REMOVE, RENAME and LINK in
// the export root, each from one fixed local UDP port with a known xid, and saves each call and
// its reply; `resend` -- after a kill -9, takeover, planned failover or failback -- sends the
// very same calls again from the same port and checks that every one is answered with the
// original reply, byte for byte (a second execution answers EXIST / NOENT, or another handle).
//   nasd-drc-probe send|resend NFS_PORT MOUNT_PORT EXPORT LOCAL_PORT PREFIX STATE_FILE
// Exit 0 when every check holds, 1 (with what differs) otherwise.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/raw_rpc.h"
#include "tests/e2e/xdr_buffer.h"

namespace nasd::e2e {
namespace {

constexpr uint32_t kCreate = 8, kMkdir = 9, kRemove = 12, kRename = 14, kLink = 15;

std::string hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}
std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out += static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16));
  return out;
}

struct Probe {
  uint32_t xid = 0, proc = 0;
  std::string args, results;
};

raw::Call call_of(const Probe& p) {
  raw::Call c;
  c.xid = p.xid;
  c.proc = p.proc;
  c.args = p.args;
  return c;
}

// Retransmits like a client: a datagram may be lost, or the server may still be opening the
// volume (JUKEBOX then comes as an NFS status, which the caller sees).
std::optional<raw::Reply> send(uint16_t nfs_port, uint16_t local_port, const Probe& p) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    try {
      raw::UdpConnection sock(nfs_port, local_port);
      if (auto r = sock.call(call_of(p), std::chrono::seconds(1))) return r;
    } catch (const std::exception&) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return std::nullopt;
}

uint32_t status_of(const raw::Reply& r) {
  if (r.reply_stat != raw::kMsgAccepted || r.accept_stat != raw::kSuccess) return 0xffffffff;
  return XdrReader(r.results).u32();
}

// A setup call on TCP with a fresh xid; returns the results of a successful one.
std::string setup(uint16_t nfs_port, uint32_t proc, const std::string& args) {
  raw::TcpConnection conn(nfs_port);
  raw::Call c;
  c.xid = raw::next_xid();
  c.proc = proc;
  c.args = args;
  auto r = conn.call(c);
  if (!r || status_of(*r) != 0) throw std::runtime_error("setup call " + std::to_string(proc) + " failed");
  return r->results;
}

int run(int argc, char** argv) {
  if (argc != 8) {
    std::cerr << "usage: nasd-drc-probe send|resend NFS_PORT MOUNT_PORT EXPORT LOCAL_PORT PREFIX STATE_FILE\n";
    return 2;
  }
  const std::string mode = argv[1];
  const auto nfs_port = static_cast<uint16_t>(std::stoi(argv[2]));
  const auto mount_port = static_cast<uint16_t>(std::stoi(argv[3]));
  const std::string exp = argv[4];
  const auto local_port = static_cast<uint16_t>(std::stoi(argv[5]));
  const std::string prefix = argv[6], state = argv[7];

  if (mode == "send") {
    const std::string root = raw::mount_root_fh(mount_port, exp);
    setup(nfs_port, kCreate, raw::create_guarded_args(root, prefix + "-doomed"));
    setup(nfs_port, kCreate, raw::create_guarded_args(root, prefix + "-moved"));
    const std::string target =
        raw::created_handle(setup(nfs_port, kCreate, raw::create_guarded_args(root, prefix + "-target")));
    const uint32_t base = raw::next_xid() ^ (static_cast<uint32_t>(local_port) << 16);
    std::vector<Probe> probes = {
        {base + 1, kCreate, raw::create_guarded_args(root, prefix + "-created"), ""},
        {base + 2, kMkdir, raw::mkdir_args(root, prefix + "-dir"), ""},
        {base + 3, kRemove, raw::dirop_args(root, prefix + "-doomed"), ""},
        {base + 4, kRename, raw::rename_args(root, prefix + "-moved", root, prefix + "-renamed"), ""},
        {base + 5, kLink, raw::link_args(target, root, prefix + "-link"), ""},
    };
    std::ofstream out(state);
    for (Probe& p : probes) {
      auto r = send(nfs_port, local_port, p);
      if (!r || status_of(*r) != 0) {
        std::cerr << "original call " << p.proc << " did not succeed\n";
        return 1;
      }
      out << p.xid << " " << p.proc << " " << hex(p.args) << " " << hex(r->results) << "\n";
    }
    std::cout << "sent 5 calls from port " << local_port << "\n";
    return out ? 0 : 1;
  }
  if (mode != "resend") return 2;
  std::ifstream in(state);
  std::string line;
  int bad = 0, n = 0;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    Probe p;
    std::string args, results;
    ls >> p.xid >> p.proc >> args >> results;
    p.args = unhex(args);
    p.results = unhex(results);
    ++n;
    std::optional<raw::Reply> r;
    // JUKEBOX (10008): the volume is not served here yet; a client waits and retransmits.
    for (int i = 0; i < 40; ++i) {
      r = send(nfs_port, local_port, p);
      if (!r || status_of(*r) != 10008) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    if (!r) {
      std::cerr << "proc " << p.proc << " xid " << p.xid << ": no reply\n";
      ++bad;
    } else if (r->results != p.results) {
      std::cerr << "proc " << p.proc << " xid " << p.xid << ": status " << status_of(*r)
                << ", not the original reply (executed again?)\n";
      ++bad;
    }
  }
  std::cout << "resent " << n << " calls from port " << local_port << ": " << (n - bad)
            << " answered with the original reply\n";
  return bad == 0 && n == 5 ? 0 : 1;
}

}  // namespace
}  // namespace nasd::e2e

int main(int argc, char** argv) {
  try {
    return nasd::e2e::run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "nasd-drc-probe: " << e.what() << "\n";
    return 1;
  }
}
