#include "tests/e2e/e2e_fixture.h"

#include <cstdlib>

namespace nasd::e2e {

void E2eTest::SetUp() {
  std::string why_not;
  std::optional<ServerChoice> choice = ServerChoice::from_environment(&why_not);
  if (!choice) {
    const char* require = std::getenv("NASD_E2E_REQUIRE");
    if (require && std::string(require) == "1") FAIL() << why_not;
    GTEST_SKIP() << why_not;
  }
  scratch_ = std::make_unique<TempDir>("nasd-e2e");
  server_ = std::make_unique<ServerProcess>(*choice, scratch_->path());
  server_->start();
  reconnect();
}

void E2eTest::TearDown() {
  nfs_.reset();
  channel_.reset();
  if (!server_) return;
  if (server_->running()) {
    bool clean = server_->stop();
    EXPECT_TRUE(clean) << server_->choice().name() << " did not exit 0 on SIGTERM ("
                       << server_->last_exit() << "); log tail:\n"
                       << server_->log_tail();
  }
  server_.reset();
  scratch_.reset();
}

void E2eTest::reconnect() {
  nfs_.reset();
  channel_.reset();
  root_ = mount_root(server_->mount_port(), kExportPath);
  channel_ = std::make_unique<RpcChannel>(server_->nfs_port(), Credential{});
  nfs_ = std::make_unique<Nfs3Client>(*channel_);
}

void E2eTest::restart_server() {
  nfs_.reset();
  channel_.reset();
  bool clean = server_->restart();
  EXPECT_TRUE(clean) << "stop before restart: " << server_->last_exit() << "\n"
                     << server_->log_tail();
  reconnect();
}

E2eTest::Session E2eTest::connect_as(uint32_t uid, uint32_t gid) {
  Session s;
  s.channel = std::make_unique<RpcChannel>(server_->nfs_port(), Credential{uid, gid, {gid}});
  s.nfs = std::make_unique<Nfs3Client>(*s.channel);
  return s;
}

std::unique_ptr<NfsClient> E2eTest::libnfs_client(uint32_t uid, uint32_t gid) {
  return std::make_unique<NfsClient>(server_->url(), uid, gid);
}

Fh E2eTest::make_file(const Fh& dir, const std::string& name, const std::string& content) {
  NewObjectReply r = nfs().create(dir, name, UNCHECKED, sattr_mode(0644));
  if (r.status != NFS3_OK || !r.fh)
    throw RpcError("CREATE " + name + ": " + st(r.status) + (r.fh ? "" : " (no handle)"));
  if (!content.empty()) {
    WRITE3res w = nfs().write(*r.fh, 0, content, FILE_SYNC);
    if (w.status != NFS3_OK) throw RpcError("WRITE " + name + ": " + st(w.status));
  }
  return *r.fh;
}

Fh E2eTest::make_dir(const Fh& dir, const std::string& name) {
  NewObjectReply r = nfs().mkdir(dir, name, sattr_mode(0755));
  if (r.status != NFS3_OK || !r.fh)
    throw RpcError("MKDIR " + name + ": " + st(r.status) + (r.fh ? "" : " (no handle)"));
  return *r.fh;
}

::testing::AssertionResult has_wcc(const wcc_data& w) {
  if (!w.before.attributes_follow) return ::testing::AssertionFailure() << "no pre-op attributes";
  if (!w.after.attributes_follow) return ::testing::AssertionFailure() << "no post-op attributes";
  const nfstime3& pre = w.before.pre_op_attr_u.attributes.ctime;
  const nfstime3& post = w.after.post_op_attr_u.attributes.ctime;
  if (post.seconds < pre.seconds || (post.seconds == pre.seconds && post.nseconds < pre.nseconds))
    return ::testing::AssertionFailure() << "post-op ctime earlier than pre-op ctime";
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult has_attrs(const post_op_attr& a) {
  if (!a.attributes_follow) return ::testing::AssertionFailure() << "no post-op attributes";
  return ::testing::AssertionSuccess();
}

fattr3 E2eTest::attrs_of(const Fh& fh) {
  GETATTR3res r = nfs().getattr(fh);
  if (r.status != NFS3_OK) throw RpcError("GETATTR: " + st(r.status));
  return r.GETATTR3res_u.resok.obj_attributes;
}

}  // namespace nasd::e2e
