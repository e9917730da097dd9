// The base fixture of every e2e test: a fresh server (nasd, or nfs-ganesha when validating the
// suite) in its own scratch folder, the export's root handle, and raw NFSv3 / MOUNT clients.
// Every test ends by stopping the server, and fails if it did not exit 0 on SIGTERM: a server
// that crashed or hung during a test is caught even when the test's own checks passed.
//
// With NASD_E2E_TARGET set (e2e_target.h) no server is started: the fixture mounts the given
// export on the given host, makes a directory of its own for the test below the export's root
// and hands that out as root(), and at the end checks that the target still answers. Tests talk
// to the server only through the accessors below (host(), nfs_port(), url(), nfs_tcp(), ...),
// so the same test runs either way; one that needs to restart, kill, configure or inspect a
// server of its own starts with NASD_E2E_NEEDS_OWN_SERVER("why"), which skips it against a
// target and says why.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "tests/e2e/e2e_target.h"
#include "tests/e2e/mount3_client.h"
#include "tests/e2e/nfs3_client.h"
#include "tests/e2e/nfs_client.h"
#include "tests/e2e/raw_rpc.h"
#include "tests/e2e/rpc_channel.h"
#include "tests/e2e/server_process.h"
#include "tests/e2e/temp_dir.h"

// In a test body or a fixture's SetUp (before E2eTest::SetUp, so nothing is made for it).
#define NASD_E2E_NEEDS_OWN_SERVER(why)                                                      \
  if (::nasd::e2e::E2eTest::has_own_server()) {                                             \
  } else                                                                                    \
    GTEST_SKIP() << "needs a server of its own (" << (why) << "); NASD_E2E_TARGET points at " \
                 << ::nasd::e2e::E2eTest::target_description()

namespace nasd::e2e {

// `n` pseudo-random bytes, the same for the same seed: file contents a test can recognise.
std::string pattern(size_t n, uint32_t seed);

class E2eTest : public ::testing::Test {
 public:
  // False when NASD_E2E_TARGET names a server to test instead of starting one.
  static bool has_own_server();
  static std::string target_description();

 protected:
  void SetUp() override;
  void TearDown() override;

  // The server this test started. Throws std::logic_error against a target: such tests begin
  // with NASD_E2E_NEEDS_OWN_SERVER.
  ServerProcess& server();
  bool is_ganesha() const { return server_ && server_->kind() == ServerKind::Ganesha; }
  const TempDir& scratch() const { return *scratch_; }

  // Where the server under test is: 127.0.0.1, its ports and /r/v0 for a server of the test's
  // own; the target's otherwise.
  const std::string& host() const { return host_; }
  uint16_t nfs_port() const { return nfs_port_; }
  uint16_t mount_port() const { return mount_port_; }
  const std::string& export_path() const { return export_path_; }
  // Raw RPC to the NFS / MOUNT port (raw_rpc.h).
  raw::TcpConnection nfs_tcp() const { return raw::TcpConnection(host_, nfs_port_); }
  raw::TcpConnection mount_tcp() const { return raw::TcpConnection(host_, mount_port_); }
  raw::UdpConnection nfs_udp() const { return raw::UdpConnection(host_, nfs_port_); }
  // A libnfs URL of `path` ("" or "/name...") inside root(): what nfs-cp and NfsClient take.
  std::string url(const std::string& path = "", const std::string& extra_query = "") const;

  // Root credential (uid 0) on the NFS port, and the test's root directory: the export's root
  // for a server of its own, a fresh directory below it against a target.
  Nfs3Client& nfs() { return *nfs_; }
  const Fh& root() const { return root_; }
  // The handle MNT of export_path() gives.
  const Fh& export_root() const { return export_root_; }

  // A separate connection with another AUTH_SYS identity.
  struct Session {
    std::unique_ptr<RpcChannel> channel;
    std::unique_ptr<Nfs3Client> nfs;
  };
  Session connect_as(uint32_t uid, uint32_t gid);
  std::unique_ptr<NfsClient> libnfs_client(uint32_t uid = 0, uint32_t gid = 0);

  // After restarting or killing the server: new connections and a fresh root handle.
  void reconnect();
  // Server restarted cleanly (SIGTERM, then start) and reconnected; fails if stop was unclean.
  void restart_server();

  // Creates a file (UNCHECKED, mode 0644) in `dir` and returns its handle; asserts success.
  Fh make_file(const Fh& dir, const std::string& name, const std::string& content = "");
  Fh make_dir(const Fh& dir, const std::string& name);
  fattr3 attrs_of(const Fh& fh);

 private:
  void set_up_target(const E2eTarget& target);
  void tear_down_target();

  std::unique_ptr<TempDir> scratch_;
  std::unique_ptr<ServerProcess> server_;
  std::optional<E2eTarget> target_;
  std::string host_ = "127.0.0.1";
  uint16_t nfs_port_ = 0;
  uint16_t mount_port_ = 0;
  std::string export_path_ = kExportPath;
  std::string test_dir_;  // against a target: the test's directory's name below the export root
  uint64_t jukebox_retries_at_start_ = 0;
  std::unique_ptr<RpcChannel> channel_;
  std::unique_ptr<Nfs3Client> nfs_;
  Fh export_root_;
  Fh root_;
};

// NFS3 status as text in assertion messages: EXPECT_EQ(r.status, NFS3_OK) << st(r.status).
inline std::string st(nfsstat3 s) { return nfsstat_name(s); }

// RFC 1813 weak cache consistency: both the pre-operation wcc_attr and the post-operation
// attributes are present, and time did not run backwards across the operation.
::testing::AssertionResult has_wcc(const wcc_data& w);
::testing::AssertionResult has_attrs(const post_op_attr& a);

}  // namespace nasd::e2e

// libnfs's nfstime3 lives in the global namespace; gtest finds the comparison there.
inline bool operator==(const nfstime3& a, const nfstime3& b) {
  return a.seconds == b.seconds && a.nseconds == b.nseconds;
}
