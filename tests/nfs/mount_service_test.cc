#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include "fs/wrapped_volume.h"

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

// The main volume while it changes hands: every call answers JUKEBOX and, unless root_known(),
// its root is not known (a forwarded volume whose new owner has not opened it), until arrived().
class MovingVolume : public fs::WrappedVolume {
 public:
  explicit MovingVolume(fs::Volume* inner)
      : fs::WrappedVolume(std::shared_ptr<fs::Volume>(inner, [](fs::Volume*) {})) {}
  fs::InodeId root() const override {
    return moving_ && !root_known_ ? fs::InodeId{} : inner().root();
  }
  fs::Status admit(const fs::OpContext&) override {
    asked_.fetch_add(1);
    return moving_ ? fs::Status::Jukebox : fs::Status::Ok;
  }
  void arrived() { moving_ = false; }
  void root_known() { root_known_ = true; }
  int asked() const { return asked_.load(); }

 private:
  std::atomic<bool> moving_{true}, root_known_{false};
  std::atomic<int> asked_{0};
};

class MountWhileMovingTest : public MountServiceTest {
 protected:
  void SetUp() override {
    MountServiceTest::SetUp();
    resolver_->add(&moving_);  // in place of the main volume (same id)
  }
  // A MountService waiting up to `wait` for a moving volume, `max_waiting` MNTs at once.
  void waiting_service(std::chrono::milliseconds wait, int max_waiting = 4) {
    MountOptions o;
    o.busy_wait = wait;
    o.max_waiting = max_waiting;
    mount_ = std::make_unique<MountService>(resolver_, exports_, codec_, table_, o);
  }
  void TearDown() override {
    moving_.arrived();  // ends any wait still running
    MountServiceTest::TearDown();
  }
  MovingVolume moving_{&main_};
};

TEST_F(MountWhileMovingTest, WithoutAWaitTheMovingVolumeIsRefusedAtOnce) {
  EXPECT_EQ(mnt("/r/main"), MNT3ERR_SERVERFAULT);  // a node whose volumes never move
  EXPECT_TRUE(dump().empty());
}

TEST_F(MountWhileMovingTest, MntWaitsForTheVolumeAndAnswersOnceItArrives) {
  waiting_service(std::chrono::seconds(30));
  std::thread mover([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    moving_.arrived();
  });
  FileHandle fh;
  EXPECT_EQ(mnt("/r/main", &fh), MNT3_OK);
  mover.join();
  EXPECT_EQ(fh.bytes, root().bytes);
  EXPECT_EQ(mount_->waiting(), 0);
  ASSERT_EQ(dump().size(), 1u);
  // The handle works at once: MNT waited until the volume answered, not only until its root
  // was known.
  fattr3 attr{};
  EXPECT_EQ(getattr(fh, &attr), NFS3_OK);
}

TEST_F(MountWhileMovingTest, AVolumeWhoseRootIsKnownButThatAnswersJukeboxIsWaitedForToo) {
  // The export's root itself: before, MNT handed out its handle at once and the client's
  // FSINFO then met JUKEBOX.
  waiting_service(std::chrono::seconds(30));
  moving_.root_known();
  FileHandle fh;
  auto answer = std::async(std::launch::async, [&] { return mnt("/r/main/", &fh); });
  while (moving_.asked() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(answer.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  moving_.arrived();
  EXPECT_EQ(answer.get(), MNT3_OK);
}

TEST_F(MountWhileMovingTest, AVolumeStillMovingAfterTheWaitIsRefused) {
  waiting_service(std::chrono::milliseconds(150));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(mnt("/r/main"), MNT3ERR_SERVERFAULT);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(150));
  EXPECT_EQ(mount_->waiting(), 0);
  EXPECT_TRUE(dump().empty());
}

TEST_F(MountWhileMovingTest, OtherErrorsAreNotWaitedFor) {
  waiting_service(std::chrono::seconds(30));
  EXPECT_EQ(mnt("/nope"), MNT3ERR_NOENT);
  moving_.arrived();
  EXPECT_EQ(mnt("/r/main/no-such-dir"), MNT3ERR_NOENT);
}

TEST_F(MountWhileMovingTest, OnlySoManyMntsWaitAtOnce) {
  waiting_service(std::chrono::seconds(30), /*max_waiting=*/1);
  auto first = std::async(std::launch::async, [this] { return mnt("/r/main"); });
  while (mount_->waiting() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  // The second would hold a second executor thread: answered at once.
  EXPECT_EQ(mnt("/r/main"), MNT3ERR_SERVERFAULT);
  moving_.arrived();
  EXPECT_EQ(first.get(), MNT3_OK);
}

TEST_F(MountWhileMovingTest, StoppingEndsTheWaits) {
  waiting_service(std::chrono::seconds(30));
  auto waiting = std::async(std::launch::async, [this] { return mnt("/r/main"); });
  while (mount_->waiting() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  mount_->stop_waiting();
  EXPECT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(waiting.get(), MNT3ERR_SERVERFAULT);
  EXPECT_EQ(mnt("/r/main"), MNT3ERR_SERVERFAULT);  // no further wait once stopped
}

TEST(MountTable, CapsTheNumberOfRecordedMounts) {
  MountTable t("");
  for (size_t i = 0; i < MountTable::kMaxEntries; i++) EXPECT_TRUE(t.add("h", "/p" + std::to_string(i)));
  EXPECT_FALSE(t.add("h", "/one-too-many"));
  EXPECT_EQ(t.entries().size(), MountTable::kMaxEntries);
}

}  // namespace
}  // namespace nasd::nfs::fixture
