// Exports that hold, against a real nasd (issue 11), and exports reloaded while it runs
// (issue 15). Each test writes its own export layout into the server's config before starting
// it, and speaks raw RPC so it controls the source address and port of every call:
// 127.0.0.1 or 127.0.0.2 (a host no export lists), a reserved port (below 1024, what a root
// NFS client uses) or an unreserved one (what any local user can send from).
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "tests/e2e/child_process.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/net_util.h"
#include "tests/e2e/raw_rpc.h"
#include "tests/e2e/server_process.h"
#include "tests/e2e/temp_dir.h"
#include "tests/e2e/xdr_buffer.h"

namespace nasd::e2e {
namespace {

using namespace std::chrono_literals;

enum : uint32_t { kGetattr = 1, kLookup = 3, kCreate = 8, kRemove = 12, kRename = 14 };
enum : uint32_t { kOk = 0, kPerm = 1, kNoEnt = 2, kAcces = 13, kInval = 22, kRofs = 30 };
constexpr uint32_t kMnt = 1;

// A second volume for the tests that cross from one volume into another under /r.
constexpr const char* kVolumeV1 =
    "\n[volume v1]\nid = 1\nbacking = v1.lfs\nsize = 1G\nsegment_size = 4M\ncache = 16M\n";

class ExportsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    NASD_E2E_NEEDS_OWN_SERVER("writes the server's own export configuration");
    std::string why_not;
    std::optional<ServerChoice> choice = ServerChoice::from_environment(&why_not);
    if (!choice) {
      const char* require = std::getenv("NASD_E2E_REQUIRE");
      if (require && std::string(require) == "1") FAIL() << why_not;
      GTEST_SKIP() << why_not;
    }
    if (choice->kind != ServerKind::Nasd) GTEST_SKIP() << "nasd's export configuration";
    scratch_ = std::make_unique<TempDir>("nasd-e2e-exports");
    server_ = std::make_unique<ServerProcess>(*choice, scratch_->path());
  }

  void TearDown() override {
    if (!server_) return;
    if (server_->running()) {
      bool clean = server_->stop();
      EXPECT_TRUE(clean) << "nasd did not exit 0 on SIGTERM (" << server_->last_exit()
                         << "); log tail:\n" << server_->log_tail();
    }
    server_.reset();
    scratch_.reset();
  }

  // Starts the server with v0 and `exports` (plus whatever [volume] sections they need).
  void start_with(const std::string& exports) {
    server_->rewrite_config(config_with(exports));
    server_->start();
  }
  std::string config_with(const std::string& exports) const {
    return nasd_config_without_exports(server_->layout()) + exports;
  }

  static raw::Call nfs_call(uint32_t proc, std::string args, uint32_t uid = 0, uint32_t gid = 0) {
    raw::Call c;
    c.xid = raw::next_xid();
    c.proc = proc;
    c.cred_body = raw::auth_sys_body(uid, gid);
    c.args = std::move(args);
    return c;
  }

  // The NFS or MOUNT status word of an accepted reply (throws for anything else).
  static uint32_t status_of(const std::optional<raw::Reply>& r) {
    if (!r) throw std::runtime_error("no reply");
    if (r->reply_stat != raw::kMsgAccepted || r->accept_stat != raw::kSuccess)
      throw std::runtime_error("RPC not accepted: reply_stat " + std::to_string(r->reply_stat) +
                               " accept_stat " + std::to_string(r->accept_stat));
    return XdrReader(r->results).u32();
  }

  // MNT over `conn`: the status, and the handle when it is 0.
  uint32_t mnt(raw::TcpConnection& conn, const std::string& path, std::string* fh = nullptr) {
    raw::Call c;
    c.xid = raw::next_xid();
    c.prog = raw::kMountProgram;
    c.proc = kMnt;
    c.args = raw::mnt_args(path);
    auto r = conn.call(c);
    uint32_t st = status_of(r);
    if (st == 0 && fh) {
      XdrReader rd(r->results);
      rd.u32();
      *fh = rd.opaque(64);
    }
    return st;
  }
  raw::TcpConnection mount_conn() { return raw::TcpConnection(server_->mount_port()); }
  raw::TcpConnection nfs_conn() { return raw::TcpConnection(server_->nfs_port()); }

  uint32_t create(raw::TcpConnection& conn, const std::string& dir, const std::string& name,
                  uint32_t uid = 0, std::string* fh = nullptr) {
    auto r = conn.call(nfs_call(kCreate, raw::create_guarded_args(dir, name), uid, uid));
    uint32_t st = status_of(r);
    if (st == kOk && fh) {
      XdrReader rd(r->results);
      rd.u32();
      if (rd.u32() == 1) *fh = rd.opaque(64);  // post_op_fh3
    }
    return st;
  }
  uint32_t lookup(raw::TcpConnection& conn, const std::string& dir, const std::string& name,
                  std::string* fh = nullptr) {
    auto r = conn.call(nfs_call(kLookup, raw::dirop_args(dir, name)));
    uint32_t st = status_of(r);
    if (st == kOk && fh) {
      XdrReader rd(r->results);
      rd.u32();
      *fh = rd.opaque(64);
    }
    return st;
  }
  // GETATTR's status; `owner` gets the file's uid.
  uint32_t getattr(raw::TcpConnection& conn, const std::string& fh, uint32_t* owner = nullptr) {
    auto r = conn.call(nfs_call(kGetattr, raw::fh_args(fh)));
    uint32_t st = status_of(r);
    if (st == kOk && owner) {
      XdrReader rd(r->results);
      rd.u32();  // status
      rd.u32();  // type
      rd.u32();  // mode
      rd.u32();  // nlink
      *owner = rd.u32();
    }
    return st;
  }

  CommandResult admin(const std::vector<std::string>& words) {
    std::vector<std::string> argv = {server_->choice().admin_binary, "--socket",
                                     server_->admin_socket().string()};
    argv.insert(argv.end(), words.begin(), words.end());
    return run_command(argv, 20s, scratch_->path());
  }

  std::unique_ptr<TempDir> scratch_;
  std::unique_ptr<ServerProcess> server_;
};

// The default export is `secure` and squashes root: uid 0 from an unreserved port (any local
// user on a client can send that) is refused at MNT and at every NFS call; from a reserved
// port it is served as the anonymous user.
TEST_F(ExportsTest, RootFromAnUnreservedPortIsRefusedAndRootIsSquashed) {
  if (::geteuid() != 0) GTEST_SKIP() << "binding a reserved source port needs root";
  start_with("\n[export /r/v0]\nvolume = v0\nclients = 127.0.0.0/8\naccess = rw\n");
  raw::TcpConnection privileged_mount(tcp_connect_reserved(server_->mount_port()));
  std::string root;
  ASSERT_EQ(mnt(privileged_mount, "/r/v0", &root), 0u) << "MNT from a reserved port";

  raw::TcpConnection user_mount = mount_conn();
  EXPECT_EQ(mnt(user_mount, "/r/v0"), 13u) << "MNT from an unreserved port (MNT3ERR_ACCES)";
  raw::TcpConnection user_nfs = nfs_conn();
  EXPECT_EQ(getattr(user_nfs, root), kPerm) << "uid 0 from an unreserved port";
  EXPECT_EQ(create(user_nfs, root, "forged-root"), kPerm);

  raw::TcpConnection privileged_nfs(tcp_connect_reserved(server_->nfs_port()));
  uint32_t owner = 1;
  ASSERT_EQ(getattr(privileged_nfs, root, &owner), kOk) << "from a reserved port";
  ASSERT_EQ(owner, 0u) << "the volume root belongs to root";
  // Squashed to anonuid, root is not the owner of its 0755 root directory any more.
  EXPECT_EQ(create(privileged_nfs, root, "by-root"), kAcces) << "root was not squashed";
}

// /pub read-only and /adm read-write on ONE volume, and a client both list: a handle from /pub
// (and every handle found through it) stays read-only; /adm's handles can write.
TEST_F(ExportsTest, ReadOnlyExportStaysReadOnlyBesideAReadWriteExportOfTheSameVolume) {
  start_with(
      "\n[export /adm]\nvolume = v0\nclients = 127.0.0.1\noptions = rw, insecure, no_root_squash\n"
      "\n[export /pub]\nvolume = v0\nclients = 127.0.0.0/8\noptions = ro, insecure, no_root_squash\n");
  raw::TcpConnection m = mount_conn();
  std::string pub, adm;
  ASSERT_EQ(mnt(m, "/pub", &pub), 0u);
  ASSERT_EQ(mnt(m, "/adm", &adm), 0u);
  raw::TcpConnection nfs = nfs_conn();
  EXPECT_EQ(create(nfs, pub, "via-pub"), kRofs) << "a /pub handle wrote";
  ASSERT_EQ(create(nfs, adm, "via-adm"), kOk) << "a /adm handle could not write";
  std::string through_pub;
  ASSERT_EQ(lookup(nfs, pub, "via-adm", &through_pub), kOk);
  auto r = nfs.call(nfs_call(kRemove, raw::dirop_args(pub, "via-adm")));
  EXPECT_EQ(status_of(r), kRofs) << "REMOVE through /pub";
  EXPECT_EQ(lookup(nfs, adm, "via-adm"), kOk);
}

// MNT of a path under /r that crosses into a volume whose only export does not list the client
// is refused (today's walk handed out a handle); LOOKUP of the junction likewise. The client
// that export lists gets in.
TEST_F(ExportsTest, MntAndLookupDoNotCrossIntoAVolumeThatRefusesTheClient) {
  start_with(std::string(kVolumeV1) +
             "\n[export /r/v0]\nvolume = v0\nclients = 127.0.0.0/8\noptions = rw, insecure\n"
             "\n[export /secret]\nvolume = v1\nclients = 127.0.0.2\n"
             "options = rw, insecure, no_root_squash\n");
  raw::TcpConnection m = mount_conn();
  EXPECT_EQ(mnt(m, "/r/v1"), 13u) << "MNT walked through /r into v1, which only 127.0.0.2 may use";
  std::string r_root;
  ASSERT_EQ(mnt(m, "/r", &r_root), 0u);
  raw::TcpConnection nfs = nfs_conn();
  EXPECT_EQ(lookup(nfs, r_root, "v1"), kAcces) << "LOOKUP of the junction into v1";
  EXPECT_EQ(lookup(nfs, r_root, "v0"), kOk);

  raw::TcpConnection other_m(tcp_connect_from(server_->mount_port(), "127.0.0.2"));
  std::string v1_root;
  ASSERT_EQ(mnt(other_m, "/r/v1", &v1_root), 0u) << "the client /secret lists crosses in";
  raw::TcpConnection other_nfs(tcp_connect_from(server_->nfs_port(), "127.0.0.2"));
  EXPECT_EQ(create(other_nfs, v1_root, "mine"), kOk) << "under /secret's rules (rw)";
}

// REMOVE "a\0x" must not remove "a": a name with a NUL byte is INVAL.
TEST_F(ExportsTest, NameWithANulByteIsInvalAndNamesNothingElse) {
  start_with("\n[export /r/v0]\nvolume = v0\nclients = 127.0.0.0/8\n"
             "options = rw, insecure, no_root_squash\n");
  raw::TcpConnection m = mount_conn();
  std::string root;
  ASSERT_EQ(mnt(m, "/r/v0", &root), 0u);
  raw::TcpConnection nfs = nfs_conn();
  ASSERT_EQ(create(nfs, root, "a"), kOk);
  auto r = nfs.call(nfs_call(kRemove, raw::dirop_args(root, std::string("a\0x", 3))));
  EXPECT_EQ(status_of(r), kInval);
  r = nfs.call(nfs_call(kCreate, raw::create_guarded_args(root, std::string("b\0", 2))));
  EXPECT_EQ(status_of(r), kInval);
  EXPECT_EQ(lookup(nfs, root, "a"), kOk) << "\"a\" was removed by a call naming \"a\\0x\"";
  EXPECT_EQ(lookup(nfs, root, "b"), kNoEnt);
  EXPECT_EQ(mnt(m, std::string("/r/v0\0/etc", 10)), 22u) << "MNT3ERR_INVAL for a NUL in a path";
}

// A host no export lists (127.0.0.2) floods the server with garbage REMOVE calls, many more
// than the duplicate request cache holds; the allowed client's retransmitted RENAME must still
// get its original reply rather than run again (NOENT).
TEST_F(ExportsTest, GarbageFloodFromAHostInNoExportKeepsTheRenameReplyCached) {
  start_with("\n[export /r/v0]\nvolume = v0\nclients = 127.0.0.1\n"
             "options = rw, insecure, no_root_squash\n");
  raw::TcpConnection m = mount_conn();
  std::string root;
  ASSERT_EQ(mnt(m, "/r/v0", &root), 0u);
  raw::TcpConnection nfs = nfs_conn();
  ASSERT_EQ(create(nfs, root, "before"), kOk);
  raw::Call rename = nfs_call(kRename, raw::rename_args(root, "before", root, "after"));
  auto first = nfs.call(rename);
  ASSERT_EQ(status_of(first), kOk);

  {
    // Each garbage call is a distinct cacheable call (new xid); the replies are drained by a
    // thread so that neither side's socket buffer fills.
    raw::TcpConnection flood(tcp_connect_from(server_->nfs_port(), "127.0.0.2"));
    constexpr int kFloodCalls = 40000;  // the cache holds 8192 entries
    // (The server may shed some of them when its queue is full; that is its right.)
    std::atomic<int> replies{0};
    std::thread drain([&] {
      while (replies < kFloodCalls && flood.receive_record(3s)) ++replies;
    });
    std::string batch;
    for (int i = 0; i < kFloodCalls; ++i) {
      raw::Call g = nfs_call(kRemove, std::string(40, static_cast<char>('A' + i % 26)));
      batch += raw::record_mark(raw::encode_call(g));
      if (batch.size() > 64 * 1024 || i + 1 == kFloodCalls) {
        ASSERT_TRUE(flood.send_bytes(batch));
        batch.clear();
      }
    }
    drain.join();
    EXPECT_GT(replies.load(), 0) << "the garbage calls were answered";
  }

  std::optional<raw::Reply> again;
  for (int attempt = 0; attempt < 5 && !again; ++attempt) {
    ASSERT_TRUE(nfs.send_call(rename));  // same xid, same bytes, same connection
    again = nfs.receive_reply(2s);
  }
  ASSERT_TRUE(again);
  EXPECT_EQ(status_of(again), kOk) << "the retransmitted RENAME ran again (NOENT)";
  EXPECT_EQ(again->results, first->results) << "the original reply, from the cache";
}

// `nasd-admin exports reload`: a new export appears, an already-mounted client's read-only
// export becomes read-write on the handle it holds, a bad file is refused whole with its line
// and reason, and the exports in force stay as they were.
TEST_F(ExportsTest, ReloadAppliesToNewAndMountedClientsAndRefusesABadFileWhole) {
  if (server_->choice().admin_binary.empty()) GTEST_SKIP() << "no nasd-admin binary";
  const std::string ro = "\n[export /r/v0]\nvolume = v0\nclients = 127.0.0.0/8\n"
                         "options = ro, insecure, no_root_squash\n";
  start_with(ro);
  raw::TcpConnection m = mount_conn();
  std::string root;
  ASSERT_EQ(mnt(m, "/r/v0", &root), 0u);
  raw::TcpConnection nfs = nfs_conn();
  ASSERT_EQ(create(nfs, root, "one"), kRofs);
  EXPECT_EQ(mnt(m, "/extra"), 2u) << "not exported yet (MNT3ERR_NOENT)";

  const std::string rw = "\n[export /r/v0]\nvolume = v0\nclients = 127.0.0.0/8\n"
                         "options = rw, insecure, no_root_squash\n"
                         "\n[export /extra]\nvolume = v0\nclients = 127.0.0.1\n"
                         "options = ro, insecure\n";
  server_->rewrite_config(config_with(rw));
  CommandResult r = admin({"exports", "reload"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(create(nfs, root, "one"), kOk) << "the mounted client's handle is now read-write";
  std::string extra;
  EXPECT_EQ(mnt(m, "/extra", &extra), 0u) << "the new export";
  r = admin({"exports"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("/extra volume=v0 clients=127.0.0.1 ro,insecure,root_squash"),
            std::string::npos) << r.output;
  EXPECT_NE(r.output.find("/r/v0 volume=v0 clients=127.0.0.0/8 rw,insecure,no_root_squash"),
            std::string::npos) << r.output;

  // One good change and one bad line: nothing of it is taken.
  std::string bad = config_with(
      "\n[export /r/v0]\nvolume = v0\nclients = 127.0.0.0/8\noptions = ro, insecure\n"
      "\n[export /extra]\nvolume = v0\nclients = 127.0.0.1\naccess = rx\n");
  server_->rewrite_config(bad);
  size_t bad_line = 1;
  for (size_t i = 0; i < bad.find("[export /extra]"); ++i) bad_line += bad[i] == '\n';
  r = admin({"exports", "reload"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("line " + std::to_string(bad_line)), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("access: expected rw or ro, got 'rx'"), std::string::npos) << r.output;
  EXPECT_EQ(create(nfs, root, "two"), kOk) << "the old (rw) exports must stay in force";
  EXPECT_EQ(mnt(m, "/extra"), 0u);

  // A file that no longer parses at all is refused the same way.
  server_->rewrite_config(config_with("\n[export /r/v0\nvolume = v0\n"));
  r = admin({"exports", "reload"});
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("unterminated section header"), std::string::npos) << r.output;
  EXPECT_EQ(create(nfs, root, "three"), kOk);

  // An export taken away: the handles issued under it are stale at once.
  ASSERT_EQ(getattr(nfs, extra), kOk);
  server_->rewrite_config(config_with(rw.substr(0, rw.find("\n[export /extra]"))));
  r = admin({"exports", "reload"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(getattr(nfs, extra), 70u) << "NFS3ERR_STALE for a removed export's handle";
  EXPECT_EQ(mnt(m, "/extra"), 2u);
  EXPECT_EQ(getattr(nfs, root), kOk);
}

// SIGHUP reloads the exports (and does not stop the server).
TEST_F(ExportsTest, SighupReloadsTheExports) {
  start_with("\n[export /r/v0]\nvolume = v0\nclients = 127.0.0.0/8\n"
             "options = rw, insecure, no_root_squash\n");
  raw::TcpConnection m = mount_conn();
  std::string root;
  ASSERT_EQ(mnt(m, "/r/v0", &root), 0u);
  raw::TcpConnection nfs = nfs_conn();
  ASSERT_EQ(create(nfs, root, "before-hup"), kOk);

  server_->rewrite_config(config_with("\n[export /r/v0]\nvolume = v0\nclients = 127.0.0.0/8\n"
                                      "options = ro, insecure, no_root_squash\n"));
  ASSERT_EQ(::kill(server_->pid(), SIGHUP), 0);
  uint32_t st = kOk;
  for (int i = 0; i < 50 && st != kRofs; ++i) {
    std::this_thread::sleep_for(100ms);
    ASSERT_TRUE(server_->running()) << "SIGHUP stopped the server:\n" << server_->log_tail();
    st = create(nfs, root, "after-hup-" + std::to_string(i));
  }
  EXPECT_EQ(st, kRofs) << "the export did not become read-only after SIGHUP";
  EXPECT_NE(server_->log_tail().find("exports reloaded"), std::string::npos) << server_->log_tail();
}

}  // namespace
}  // namespace nasd::e2e
