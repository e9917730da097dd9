// The base fixture of every e2e test: a fresh server (nasd, or nfs-ganesha when validating the
// suite) in its own scratch folder, the export's root handle, and raw NFSv3 / MOUNT clients.
// Every test ends by stopping the server, and fails if it did not exit 0 on SIGTERM: a server
// that crashed or hung during a test is caught even when the test's own checks passed.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "tests/e2e/mount3_client.h"
#include "tests/e2e/nfs3_client.h"
#include "tests/e2e/nfs_client.h"
#include "tests/e2e/rpc_channel.h"
#include "tests/e2e/server_process.h"
#include "tests/e2e/temp_dir.h"

namespace nasd::e2e {

class E2eTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  ServerProcess& server() { return *server_; }
  bool is_ganesha() const { return server_->kind() == ServerKind::Ganesha; }
  const TempDir& scratch() const { return *scratch_; }

  // Root credential (uid 0) on the NFS port, and the export's root handle.
  Nfs3Client& nfs() { return *nfs_; }
  const Fh& root() const { return root_; }

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
  std::unique_ptr<TempDir> scratch_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<RpcChannel> channel_;
  std::unique_ptr<Nfs3Client> nfs_;
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
