// MOUNT v3: NULL, MNT (exported and not), EXPORT, DUMP, UMNT, UMNTALL.
#include <algorithm>

#include "tests/e2e/e2e_fixture.h"

namespace nasd::e2e {
namespace {

constexpr int kAuthSys = 1;

class MountTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    channel_ = std::make_unique<RpcChannel>(host(), mount_port(), Credential{});
    mount_ = std::make_unique<Mount3Client>(*channel_);
  }
  void TearDown() override {
    mount_.reset();
    channel_.reset();
    E2eTest::TearDown();
  }
  Mount3Client& mount() { return *mount_; }

  bool dump_lists(const std::string& path) {
    auto list = mount().dump();
    return std::any_of(list.begin(), list.end(),
                       [&](const MountEntry& m) { return m.directory == path; });
  }

 private:
  std::unique_ptr<RpcChannel> channel_;
  std::unique_ptr<Mount3Client> mount_;
};

TEST_F(MountTest, NullAnswers) { mount().null(); }

TEST_F(MountTest, MntReturnsTheRootHandleAndAuthSys) {
  MountReply r = mount().mnt(export_path());
  ASSERT_EQ(r.status, MNT3_OK) << mountstat3_to_str(r.status);
  EXPECT_GT(r.root.bytes.size(), 0u);
  EXPECT_LE(r.root.bytes.size(), 64u);
  EXPECT_NE(std::find(r.auth_flavors.begin(), r.auth_flavors.end(), kAuthSys),
            r.auth_flavors.end())
      << "AUTH_SYS must be offered";
  fattr3 a = attrs_of(r.root);
  EXPECT_EQ(a.type, NF3DIR);
  EXPECT_EQ(a.fileid, attrs_of(export_root()).fileid) << "MNT twice names the same root";
}

TEST_F(MountTest, MntOfAPathThatIsNotExportedIsNoent) {
  MountReply r = mount().mnt("/no/such/export");
  EXPECT_EQ(r.status, MNT3ERR_NOENT) << mountstat3_to_str(r.status);
  EXPECT_TRUE(r.root.bytes.empty());
}

TEST_F(MountTest, ExportListsTheExport) {
  auto list = mount().exports();
  ASSERT_FALSE(list.empty());
  EXPECT_TRUE(std::any_of(list.begin(), list.end(),
                          [&](const ExportEntry& e) { return e.directory == export_path(); }))
      << "EXPORT does not list " << export_path();
}

TEST_F(MountTest, DumpFollowsMntAndUmnt) {
  ASSERT_EQ(mount().mnt(export_path()).status, MNT3_OK);
  EXPECT_TRUE(dump_lists(export_path())) << "DUMP forgot a mount";
  mount().umnt(export_path());
  EXPECT_FALSE(dump_lists(export_path())) << "UMNT did not remove the mount from DUMP";

  ASSERT_EQ(mount().mnt(export_path()).status, MNT3_OK);
  mount().umntall();
  EXPECT_FALSE(dump_lists(export_path())) << "UMNTALL did not clear DUMP";
  // Unmounting is advisory in NFSv3: the handle keeps working.
  EXPECT_EQ(nfs().getattr(root()).status, NFS3_OK);
}

}  // namespace
}  // namespace nasd::e2e
