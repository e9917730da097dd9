#include <unistd.h>

#include <filesystem>

#include "tests/nfs/nfs3_test_ops.h"

namespace nasd::nfs::fixture {
namespace {

class MountServiceTest : public Nfs3Ops {
 protected:
  void SetUp() override {
    table_file_ = std::filesystem::temp_directory_path() /
                  ("nasd-rmtab-" + std::to_string(::getpid()) + "-" +
                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove(table_file_);
    table_ = std::make_shared<MountTable>(table_file_.string());
    mount_ = std::make_unique<MountService>(resolver_, exports_, codec_, table_);
    mcall_ = call_;
    mcall_.prog = 100005;
    mcall_.vers = 3;
  }
  void TearDown() override { std::filesystem::remove(table_file_); }

  rpc::DispatchResult dispatch(uint32_t proc, const std::vector<uint8_t>& args,
                               std::vector<uint8_t>* out) {
    rpc::CallContext c = mcall_;
    c.proc = proc;
    return mount_->dispatch(c, args, out);
  }

  // MNT; on success `fh` gets the root handle.
  mountstat3 mnt(const std::string& path, FileHandle* fh = nullptr) {
    char* p = const_cast<char*>(path.c_str());
    std::vector<uint8_t> out;
    EXPECT_EQ(dispatch(MOUNTPROC3_MNT, encode(xdr_mnt_dirpath, p), &out).accept,
              rpc::AcceptStat::Success);
    xdr::Decoded<mountres3> res(xdr_mountres3);
    EXPECT_TRUE(res.decode(out));
    if (res->fhs_status == MNT3_OK) {
      const mountres3_ok& ok = res->mountres3_u.mountinfo;
      EXPECT_EQ(ok.auth_flavors.auth_flavors_len, 2u);
      EXPECT_EQ(ok.auth_flavors.auth_flavors_val[0], 1);  // AUTH_SYS first
      EXPECT_EQ(ok.auth_flavors.auth_flavors_val[1], 0);
      EXPECT_EQ(ok.fhandle.mnt_fhandle3_len, FileHandle::kSize);
      if (fh && ok.fhandle.mnt_fhandle3_len == FileHandle::kSize)
        std::copy(ok.fhandle.mnt_fhandle3_val, ok.fhandle.mnt_fhandle3_val + FileHandle::kSize,
                  fh->bytes.begin());
    }
    return res->fhs_status;
  }

  std::vector<MountEntry> dump() {
    std::vector<uint8_t> out;
    EXPECT_EQ(dispatch(MOUNTPROC3_DUMP, {}, &out).accept, rpc::AcceptStat::Success);
    xdr::Decoded<mnt_mountlist> list(xdr_mnt_mountlist);
    EXPECT_TRUE(list.decode(out));
    std::vector<MountEntry> entries;
    for (mnt_mountbody* b = *list; b; b = b->ml_next) entries.push_back({b->ml_hostname, b->ml_directory});
    return entries;
  }

  std::filesystem::path table_file_;
  std::shared_ptr<MountTable> table_;
  std::unique_ptr<MountService> mount_;
  rpc::CallContext mcall_;
};

TEST_F(MountServiceTest, MntGivesTheExportRootHandle) {
  FileHandle fh;
  ASSERT_EQ(mnt("/r/main", &fh), MNT3_OK);
  EXPECT_EQ(fh.bytes, root().bytes);
  fattr3 attr{};
  EXPECT_EQ(getattr(fh, &attr), NFS3_OK);
  EXPECT_EQ(attr.type, NF3DIR);
  EXPECT_EQ(mnt("/r/main/", &fh), MNT3_OK);  // same export, spelled differently
}

TEST_F(MountServiceTest, MntBelowAnExportWalksTheVolume) {
  FileHandle a, b, f;
  ASSERT_EQ(mkdir(root(), "a", &a), NFS3_OK);
  ASSERT_EQ(mkdir(a, "b", &b), NFS3_OK);
  ASSERT_EQ(create(a, "file", &f), NFS3_OK);
  FileHandle got;
  ASSERT_EQ(mnt("/r/main/a/b", &got), MNT3_OK);
  EXPECT_EQ(got.bytes, b.bytes);
  EXPECT_EQ(mnt("/r/main/a/missing"), MNT3ERR_NOENT);
  EXPECT_EQ(mnt("/r/main/a/file"), MNT3ERR_NOTDIR);
  EXPECT_EQ(mnt("/r/main/a/file/x"), MNT3ERR_NOTDIR);
  EXPECT_EQ(mnt("/r/main/../main"), MNT3ERR_INVAL);
}

TEST_F(MountServiceTest, UnknownPathAndUnlistedClient) {
  EXPECT_EQ(mnt("/nowhere"), MNT3ERR_NOENT);
  EXPECT_EQ(mnt("relative/path"), MNT3ERR_NOENT);
  mcall_.peer = ipv4_peer("192.168.9.9");
  EXPECT_EQ(mnt("/r/main"), MNT3ERR_ACCES);
  EXPECT_EQ(mnt("/r/archive"), MNT3_OK);  // exported to *
}

TEST_F(MountServiceTest, DumpListsMountsUntilUnmounted) {
  ASSERT_EQ(mnt("/r/main"), MNT3_OK);
  ASSERT_EQ(mnt("/r/archive/"), MNT3_OK);
  EXPECT_EQ(dump(), (std::vector<MountEntry>{{"127.0.0.1", "/r/main"}, {"127.0.0.1", "/r/archive"}}));

  char* path = const_cast<char*>("/r/main");
  std::vector<uint8_t> out;
  ASSERT_EQ(dispatch(MOUNTPROC3_UMNT, encode(xdr_mnt_dirpath, path), &out).accept,
            rpc::AcceptStat::Success);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(dump(), (std::vector<MountEntry>{{"127.0.0.1", "/r/archive"}}));
  ASSERT_EQ(dispatch(MOUNTPROC3_UMNTALL, {}, &out).accept, rpc::AcceptStat::Success);
  EXPECT_TRUE(dump().empty());
  EXPECT_TRUE(MountTable(table_file_.string()).entries().empty());  // the removal was saved
}

TEST_F(MountServiceTest, MountTableSurvivesARestart) {
  ASSERT_EQ(mnt("/r/main"), MNT3_OK);
  mcall_.peer = ipv4_peer("10.1.0.3");
  ASSERT_EQ(mnt("/r/main-ro"), MNT3_OK);
  MountTable reloaded(table_file_.string());
  EXPECT_EQ(reloaded.entries(),
            (std::vector<MountEntry>{{"127.0.0.1", "/r/main"}, {"10.1.0.3", "/r/main-ro"}}));
}

TEST_F(MountServiceTest, ExportListsPathsWithClientGroups) {
  std::vector<uint8_t> out;
  ASSERT_EQ(dispatch(MOUNTPROC3_EXPORT, {}, &out).accept, rpc::AcceptStat::Success);
  xdr::Decoded<mnt_exports> list(xdr_mnt_exports);
  ASSERT_TRUE(list.decode(out));
  std::vector<std::string> dirs, first_groups;
  for (mnt_exportnode* e = *list; e; e = e->ex_next) dirs.push_back(e->ex_dir);
  for (mnt_groupnode* g = (*list)->ex_groups; g; g = g->gr_next) first_groups.push_back(g->gr_name);
  EXPECT_EQ(dirs, (std::vector<std::string>{"/r/main", "/r/main-ro", "/r/archive"}));
  EXPECT_EQ(first_groups, (std::vector<std::string>{"127.0.0.0/8", "::1"}));
}

TEST_F(MountServiceTest, VersionOneMntReturnsFhstatus) {
  mcall_.vers = 1;
  char* p = const_cast<char*>("/r/main");
  std::vector<uint8_t> out;
  ASSERT_EQ(dispatch(MOUNTPROC3_MNT, encode(xdr_mnt_dirpath, p), &out).accept, rpc::AcceptStat::Success);
  xdr::Decoded<mnt_fhstatus> res(xdr_mnt_fhstatus);
  ASSERT_TRUE(res.decode(out));
  ASSERT_EQ(res->fhs_status, 0u);
  EXPECT_EQ(std::memcmp(res->mnt_fhstatus_u.fhs_fhandle, root().bytes.data(), FHSIZE), 0);

  p = const_cast<char*>("/nope");
  out.clear();
  ASSERT_EQ(dispatch(MOUNTPROC3_MNT, encode(xdr_mnt_dirpath, p), &out).accept, rpc::AcceptStat::Success);
  xdr::Decoded<mnt_fhstatus> err(xdr_mnt_fhstatus);
  ASSERT_TRUE(err.decode(out));
  EXPECT_EQ(err->fhs_status, 2u);  // ENOENT
}

TEST_F(MountServiceTest, BadCallsAreRefused) {
  std::vector<uint8_t> out;
  EXPECT_EQ(dispatch(MOUNTPROC3_MNT, {0, 0, 4, 1}, &out).accept, rpc::AcceptStat::GarbageArgs);
  EXPECT_EQ(dispatch(6, {}, &out).accept, rpc::AcceptStat::ProcUnavail);
  mcall_.vers = 4;
  rpc::DispatchResult r = dispatch(0, {}, &out);
  EXPECT_EQ(r.accept, rpc::AcceptStat::ProgMismatch);
  EXPECT_EQ(r.low_version, 1u);
  EXPECT_EQ(r.high_version, 3u);
}

TEST(MountTable, CapsTheNumberOfRecordedMounts) {
  MountTable t("");
  for (size_t i = 0; i < MountTable::kMaxEntries; i++) EXPECT_TRUE(t.add("h", "/p" + std::to_string(i)));
  EXPECT_FALSE(t.add("h", "/one-too-many"));
  EXPECT_EQ(t.entries().size(), MountTable::kMaxEntries);
}

}  // namespace
}  // namespace nasd::nfs::fixture
