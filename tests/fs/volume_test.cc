// Every Volume call of LfsVolume, success and error paths.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>

#include "fs/lfs/fsck.h"
#include "util/config.h"
#include "tests/fs/test_volume.h"

namespace nasd::fs::lfs::testing {
namespace {

class VolumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    opts_ = small_options(dir_.path());
    vol_ = make_volume(opts_);
    ASSERT_TRUE(vol_);
    root_ = vol_->root();
  }
  ScratchDir dir_;
  LfsOptions opts_;
  std::unique_ptr<LfsVolume> vol_;
  InodeId root_;
  OpContext ctx_ = root_ctx();
};

TEST_F(VolumeTest, RootIsDirectoryWithDotDotToItself) {
  Attr a = getattr(*vol_, root_);
  EXPECT_EQ(a.type, FileType::Dir);
  EXPECT_EQ(a.nlink, 2u);
  EXPECT_EQ(a.fsid, 5u);
  InodeId id;
  ASSERT_EQ(lookup(*vol_, root_, "..", &id), Status::Ok);
  EXPECT_EQ(id, root_);
  ASSERT_EQ(lookup(*vol_, root_, ".", &id), Status::Ok);
  EXPECT_EQ(id, root_);
}

TEST_F(VolumeTest, CreateWriteReadBack) {
  InodeId f = create_file(*vol_, root_, "a.txt");
  auto data = pattern(10000, 1);
  ASSERT_EQ(write_at(*vol_, f, 0, data), Status::Ok);
  EXPECT_EQ(read_at(*vol_, f, 0, 20000), data);
  Attr a = getattr(*vol_, f);
  EXPECT_EQ(a.size, 10000u);
  EXPECT_EQ(a.used, 3u * 4096);
  EXPECT_EQ(a.nlink, 1u);
  EXPECT_EQ(a.mode, 0644u);
  InodeId found;
  ASSERT_EQ(lookup(*vol_, root_, "a.txt", &found), Status::Ok);
  EXPECT_EQ(found, f);
  std::vector<uint8_t> d;
  bool eof = false;
  std::optional<Attr> pa;
  ASSERT_EQ(vol_->read(ctx_, f, 9990, 100, &d, &eof, &pa), Status::Ok);
  EXPECT_EQ(d.size(), 10u);
  EXPECT_TRUE(eof);
}

TEST_F(VolumeTest, UnalignedOverwriteKeepsNeighbours) {
  InodeId f = create_file(*vol_, root_, "f");
  auto base = pattern(3 * 4096, 2);
  ASSERT_EQ(write_at(*vol_, f, 0, base, Stability::Unstable), Status::Ok);
  auto patch = pattern(5000, 3);
  ASSERT_EQ(write_at(*vol_, f, 3000, patch), Status::Ok);
  std::copy(patch.begin(), patch.end(), base.begin() + 3000);
  EXPECT_EQ(read_at(*vol_, f, 0, 3 * 4096), base);
}

TEST_F(VolumeTest, CreateModes) {
  SetAttr sa;
  InodeId a, b;
  std::optional<Attr> at;
  Wcc w;
  ASSERT_EQ(vol_->create(ctx_, root_, "x", CreateMode::Guarded, sa, 0, &a, &at, &w), Status::Ok);
  EXPECT_TRUE(w.before && w.after);
  EXPECT_EQ(vol_->create(ctx_, root_, "x", CreateMode::Guarded, sa, 0, &b, &at, &w), Status::Exist);
  ASSERT_EQ(write_at(*vol_, a, 0, pattern(100, 1)), Status::Ok);
  SetAttr trunc;
  trunc.size = 0;
  ASSERT_EQ(vol_->create(ctx_, root_, "x", CreateMode::Unchecked, trunc, 0, &b, &at, &w), Status::Ok);
  EXPECT_EQ(b, a);
  EXPECT_EQ(getattr(*vol_, a).size, 0u);
  // Exclusive: the same verifier is a retransmission and succeeds; another is Exist.
  ASSERT_EQ(vol_->create(ctx_, root_, "e", CreateMode::Exclusive, sa, 77, &a, &at, &w), Status::Ok);
  ASSERT_EQ(vol_->create(ctx_, root_, "e", CreateMode::Exclusive, sa, 77, &b, &at, &w), Status::Ok);
  EXPECT_EQ(a, b);
  EXPECT_EQ(vol_->create(ctx_, root_, "e", CreateMode::Exclusive, sa, 78, &b, &at, &w), Status::Exist);
  EXPECT_EQ(vol_->create(ctx_, root_, "x", CreateMode::Exclusive, sa, 77, &b, &at, &w), Status::Exist);
}

TEST_F(VolumeTest, NameErrors) {
  SetAttr sa;
  InodeId id;
  std::optional<Attr> at;
  Wcc w;
  std::string long_name(256, 'n');
  EXPECT_EQ(vol_->create(ctx_, root_, long_name, CreateMode::Guarded, sa, 0, &id, &at, &w),
            Status::NameTooLong);
  EXPECT_EQ(vol_->create(ctx_, root_, std::string(255, 'n'), CreateMode::Guarded, sa, 0, &id, &at, &w),
            Status::Ok);
  EXPECT_EQ(vol_->create(ctx_, root_, "a/b", CreateMode::Guarded, sa, 0, &id, &at, &w), Status::Inval);
  EXPECT_EQ(vol_->create(ctx_, root_, "", CreateMode::Guarded, sa, 0, &id, &at, &w), Status::Inval);
  EXPECT_EQ(vol_->create(ctx_, root_, ".", CreateMode::Guarded, sa, 0, &id, &at, &w), Status::Exist);
  EXPECT_EQ(lookup(*vol_, root_, long_name, &id), Status::NameTooLong);
  EXPECT_EQ(lookup(*vol_, root_, "missing", &id), Status::NoEnt);
}

TEST_F(VolumeTest, NotDirAndIsDir) {
  InodeId f = create_file(*vol_, root_, "file");
  InodeId d = make_dir(*vol_, root_, "dir");
  InodeId id;
  EXPECT_EQ(lookup(*vol_, f, "x", &id), Status::NotDir);
  Wcc w;
  EXPECT_EQ(vol_->remove(ctx_, root_, "dir", &w), Status::IsDir);
  EXPECT_EQ(vol_->rmdir(ctx_, root_, "file", &w), Status::NotDir);
  std::vector<uint8_t> data;
  bool eof;
  std::optional<Attr> a;
  EXPECT_EQ(vol_->read(ctx_, d, 0, 10, &data, &eof, &a), Status::IsDir);
  EXPECT_EQ(write_at(*vol_, d, 0, pattern(10, 1)), Status::IsDir);
  ReaddirResult rr;
  EXPECT_EQ(vol_->readdir(ctx_, f, 0, 0, 10, false, &rr), Status::NotDir);
  std::optional<Attr> fa;
  EXPECT_EQ(vol_->link(ctx_, d, root_, "dirlink", &fa, &w), Status::IsDir);
}

TEST_F(VolumeTest, MkdirRmdirNotEmptyAndLinkCounts) {
  InodeId d = make_dir(*vol_, root_, "d");
  EXPECT_EQ(getattr(*vol_, root_).nlink, 3u);
  InodeId sub = make_dir(*vol_, d, "sub");
  EXPECT_EQ(getattr(*vol_, d).nlink, 3u);
  InodeId dd;
  ASSERT_EQ(lookup(*vol_, sub, "..", &dd), Status::Ok);
  EXPECT_EQ(dd, d);
  Wcc w;
  EXPECT_EQ(vol_->rmdir(ctx_, root_, "d", &w), Status::NotEmpty);
  InodeId id;
  std::optional<Attr> a;
  EXPECT_EQ(vol_->mkdir(ctx_, root_, "d", SetAttr{}, &id, &a, &w), Status::Exist);
  ASSERT_EQ(vol_->rmdir(ctx_, d, "sub", &w), Status::Ok);
  ASSERT_EQ(vol_->rmdir(ctx_, root_, "d", &w), Status::Ok);
  EXPECT_EQ(getattr(*vol_, root_).nlink, 2u);
  Attr at;
  EXPECT_EQ(vol_->getattr(ctx_, d, &at), Status::Stale);
  EXPECT_EQ(vol_->rmdir(ctx_, root_, "d", &w), Status::NoEnt);
  EXPECT_EQ(vol_->rmdir(ctx_, root_, ".", &w), Status::Inval);
}

TEST_F(VolumeTest, StaleAfterRemoveAndGenerationOnReuse) {
  InodeId f = create_file(*vol_, root_, "f");
  Wcc w;
  ASSERT_EQ(vol_->remove(ctx_, root_, "f", &w), Status::Ok);
  Attr a;
  EXPECT_EQ(vol_->getattr(ctx_, f, &a), Status::Stale);
  EXPECT_EQ(write_at(*vol_, f, 0, pattern(10, 1)), Status::Stale);
  EXPECT_EQ(vol_->remove(ctx_, root_, "f", &w), Status::NoEnt);
  InodeId g = create_file(*vol_, root_, "g");
  EXPECT_EQ(g.ino, f.ino);  // the number is reused ...
  EXPECT_NE(g.gen, f.gen);  // ... under a new generation
  EXPECT_EQ(vol_->getattr(ctx_, f, &a), Status::Stale);
  EXPECT_EQ(vol_->getattr(ctx_, InodeId{999999, 1}, &a), Status::Stale);
}

TEST_F(VolumeTest, HardLinksAndMLink) {
  InodeId f = create_file(*vol_, root_, "f");
  std::optional<Attr> fa;
  Wcc w;
  ASSERT_EQ(vol_->link(ctx_, f, root_, "g", &fa, &w), Status::Ok);
  ASSERT_TRUE(fa);
  EXPECT_EQ(fa->nlink, 2u);
  EXPECT_EQ(vol_->link(ctx_, f, root_, "g", &fa, &w), Status::Exist);
  ASSERT_EQ(vol_->remove(ctx_, root_, "f", &w), Status::Ok);
  EXPECT_EQ(getattr(*vol_, f).nlink, 1u);
  InodeId g;
  ASSERT_EQ(lookup(*vol_, root_, "g", &g), Status::Ok);
  EXPECT_EQ(g, f);
  // Drive nlink to the limit through setup links in a subdirectory.
  InodeId d = make_dir(*vol_, root_, "many");
  // Journalled: no per-call sync keeps this fast.
  uint32_t max = vol_->limits().link_max;
  Status st = Status::Ok;
  for (uint32_t i = 1; i < max && st == Status::Ok; i++) {
    const std::string name = "l" + std::to_string(i);
    st = apply_journalled_for_testing(*vol_, i, call::LinkArgs{f, d, name}).status;
  }
  ASSERT_EQ(st, Status::Ok);
  EXPECT_EQ(getattr(*vol_, f).nlink, max);
  EXPECT_EQ(vol_->link(ctx_, f, d, "one-too-many", &fa, &w), Status::MLink);
}

TEST_F(VolumeTest, SymlinkAndReadlink) {
  InodeId id;
  std::optional<Attr> a;
  Wcc w;
  ASSERT_EQ(vol_->symlink(ctx_, root_, "ln", "../some/where", SetAttr{}, &id, &a, &w), Status::Ok);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->type, FileType::Lnk);
  EXPECT_EQ(a->size, 13u);
  std::string t;
  ASSERT_EQ(vol_->readlink(ctx_, id, &t, &a), Status::Ok);
  EXPECT_EQ(t, "../some/where");
  InodeId f = create_file(*vol_, root_, "f");
  EXPECT_EQ(vol_->readlink(ctx_, f, &t, &a), Status::Inval);
  EXPECT_EQ(vol_->symlink(ctx_, root_, "ln2", std::string(1025, 'x'), SetAttr{}, &id, &a, &w),
            Status::NameTooLong);
  EXPECT_EQ(vol_->symlink(ctx_, root_, "ln", "x", SetAttr{}, &id, &a, &w), Status::Exist);
}

TEST_F(VolumeTest, MknodTypesAndRdev) {
  InodeId id;
  std::optional<Attr> a;
  Wcc w;
  ASSERT_EQ(vol_->mknod(ctx_, root_, "c", FileType::Chr, SetAttr{}, 4, 64, &id, &a, &w), Status::Ok);
  EXPECT_EQ(a->type, FileType::Chr);
  EXPECT_EQ(a->rdev_major, 4u);
  EXPECT_EQ(a->rdev_minor, 64u);
  ASSERT_EQ(vol_->mknod(ctx_, root_, "p", FileType::Fifo, SetAttr{}, 0, 0, &id, &a, &w), Status::Ok);
  ASSERT_EQ(vol_->mknod(ctx_, root_, "s", FileType::Sock, SetAttr{}, 0, 0, &id, &a, &w), Status::Ok);
  EXPECT_EQ(vol_->mknod(ctx_, root_, "r", FileType::Reg, SetAttr{}, 0, 0, &id, &a, &w), Status::BadType);
  EXPECT_EQ(vol_->mknod(ctx_, root_, "d", FileType::Dir, SetAttr{}, 0, 0, &id, &a, &w), Status::BadType);
  OpContext user = user_ctx(1000, 1000);
  SetAttr open;
  open.mode = 0777;
  ASSERT_EQ(vol_->setattr(ctx_, root_, open, std::nullopt, &w), Status::Ok);
  EXPECT_EQ(vol_->mknod(user, root_, "b", FileType::Blk, SetAttr{}, 8, 0, &id, &a, &w), Status::Perm);
}

TEST_F(VolumeTest, RenameCases) {
  InodeId a = create_file(*vol_, root_, "a");
  InodeId b = create_file(*vol_, root_, "b");
  InodeId d1 = make_dir(*vol_, root_, "d1");
  InodeId d2 = make_dir(*vol_, root_, "d2");
  Wcc fw, tw;
  // Over an existing file: the target is replaced and freed.
  ASSERT_EQ(vol_->rename(ctx_, root_, "a", root_, "b", &fw, &tw), Status::Ok);
  InodeId got;
  ASSERT_EQ(lookup(*vol_, root_, "b", &got), Status::Ok);
  EXPECT_EQ(got, a);
  EXPECT_EQ(lookup(*vol_, root_, "a", &got), Status::NoEnt);
  Attr at;
  EXPECT_EQ(vol_->getattr(ctx_, b, &at), Status::Stale);
  EXPECT_EQ(vol_->rename(ctx_, root_, "nope", root_, "x", &fw, &tw), Status::NoEnt);
  // Directory across parents updates ".." and link counts.
  ASSERT_EQ(vol_->rename(ctx_, root_, "d1", d2, "moved", &fw, &tw), Status::Ok);
  ASSERT_EQ(lookup(*vol_, d1, "..", &got), Status::Ok);
  EXPECT_EQ(got, d2);
  EXPECT_EQ(getattr(*vol_, d2).nlink, 3u);
  EXPECT_EQ(getattr(*vol_, root_).nlink, 3u);
  // Into its own subtree: Inval.
  EXPECT_EQ(vol_->rename(ctx_, root_, "d2", d1, "loop", &fw, &tw), Status::Inval);
  // Type mismatches and non-empty targets.
  EXPECT_EQ(vol_->rename(ctx_, root_, "b", root_, "d2", &fw, &tw), Status::IsDir);
  InodeId e = make_dir(*vol_, root_, "e");
  (void)e;
  EXPECT_EQ(vol_->rename(ctx_, root_, "e", root_, "b", &fw, &tw), Status::NotDir);
  EXPECT_EQ(vol_->rename(ctx_, root_, "e", root_, "d2", &fw, &tw), Status::NotEmpty);
  // Over an empty directory.
  InodeId empty = make_dir(*vol_, root_, "empty");
  ASSERT_EQ(vol_->rename(ctx_, root_, "e", root_, "empty", &fw, &tw), Status::Ok);
  EXPECT_EQ(vol_->getattr(ctx_, empty, &at), Status::Stale);
  EXPECT_EQ(getattr(*vol_, root_).nlink, 4u);  // d2, empty(=e); d1 moved away
  // Same name: no-op.
  EXPECT_EQ(vol_->rename(ctx_, root_, "b", root_, "b", &fw, &tw), Status::Ok);
  EXPECT_EQ(vol_->rename(ctx_, root_, ".", root_, "x", &fw, &tw), Status::Inval);
}

TEST_F(VolumeTest, SetattrSizeModeTimesAndGuard) {
  InodeId f = create_file(*vol_, root_, "f");
  ASSERT_EQ(write_at(*vol_, f, 0, pattern(20000, 4)), Status::Ok);
  SetAttr sa;
  sa.size = 5000;
  Wcc w;
  ASSERT_EQ(vol_->setattr(ctx_, f, sa, std::nullopt, &w), Status::Ok);
  ASSERT_TRUE(w.before && w.after);
  EXPECT_EQ(w.before->size, 20000u);
  EXPECT_EQ(w.after->size, 5000u);
  EXPECT_EQ(w.after->used, 2u * 4096);
  // Growing again exposes zeros, not old data.
  sa.size = 12000;
  ASSERT_EQ(vol_->setattr(ctx_, f, sa, std::nullopt, &w), Status::Ok);
  auto d = read_at(*vol_, f, 0, 12000);
  auto want = pattern(20000, 4);
  want.resize(5000);
  want.resize(12000, 0);
  EXPECT_EQ(d, want);
  SetAttr times;
  times.mtime_how = TimeHow::ClientTime;
  times.mtime = Time{1234567, 890};
  times.mode = 0600;
  ASSERT_EQ(vol_->setattr(ctx_, f, times, std::nullopt, &w), Status::Ok);
  Attr a = getattr(*vol_, f);
  EXPECT_EQ(a.mtime, (Time{1234567, 890}));
  EXPECT_EQ(a.mode, 0600u);
  EXPECT_EQ(vol_->setattr(ctx_, f, times, Time{1, 1}, &w), Status::NotSync);
  EXPECT_EQ(vol_->setattr(ctx_, f, times, a.ctime, &w), Status::Ok);
  InodeId d2 = make_dir(*vol_, root_, "dd");
  SetAttr dsize;
  dsize.size = 0;
  EXPECT_EQ(vol_->setattr(ctx_, d2, dsize, std::nullopt, &w), Status::IsDir);
}

TEST_F(VolumeTest, PermissionsEnforcedForOtherUsers) {
  OpContext alice = user_ctx(1000, 100), bob = user_ctx(2000, 200);
  SetAttr open;
  open.mode = 0777;
  Wcc w;
  ASSERT_EQ(vol_->setattr(ctx_, root_, open, std::nullopt, &w), Status::Ok);
  InodeId f = create_file(*vol_, root_, "alice.txt", alice);
  EXPECT_EQ(getattr(*vol_, f).uid, 1000u);
  EXPECT_EQ(getattr(*vol_, f).gid, 100u);
  EXPECT_EQ(write_at(*vol_, f, 0, pattern(10, 1), Stability::FileSync, bob), Status::Access);
  ASSERT_EQ(write_at(*vol_, f, 0, pattern(10, 1), Stability::FileSync, alice), Status::Ok);
  std::vector<uint8_t> d;
  bool eof;
  std::optional<Attr> a;
  EXPECT_EQ(vol_->read(bob, f, 0, 10, &d, &eof, &a), Status::Ok);  // 0644
  SetAttr chmod;
  chmod.mode = 0600;
  EXPECT_EQ(vol_->setattr(bob, f, chmod, std::nullopt, &w), Status::Perm);
  ASSERT_EQ(vol_->setattr(alice, f, chmod, std::nullopt, &w), Status::Ok);
  EXPECT_EQ(vol_->read(bob, f, 0, 10, &d, &eof, &a), Status::Access);
  uint32_t granted = 0;
  ASSERT_EQ(vol_->access(bob, f, kAccessRead | kAccessModify, &granted, &a), Status::Ok);
  EXPECT_EQ(granted, 0u);
  ASSERT_EQ(vol_->access(alice, f, kAccessRead | kAccessModify | kAccessExecute, &granted, &a),
            Status::Ok);
  EXPECT_EQ(granted, uint32_t(kAccessRead | kAccessModify));
  SetAttr chown;
  chown.uid = 2000;
  EXPECT_EQ(vol_->setattr(alice, f, chown, std::nullopt, &w), Status::Perm);
  // Sticky directory: bob may not remove alice's file even with write permission.
  SetAttr sticky;
  sticky.mode = 01777;
  ASSERT_EQ(vol_->setattr(ctx_, root_, sticky, std::nullopt, &w), Status::Ok);
  EXPECT_EQ(vol_->remove(bob, root_, "alice.txt", &w), Status::Access);
  ASSERT_EQ(vol_->remove(alice, root_, "alice.txt", &w), Status::Ok);
  // Directory without write permission for others.
  InodeId priv = make_dir(*vol_, root_, "priv");
  InodeId id;
  std::optional<Attr> at;
  EXPECT_EQ(vol_->create(bob, priv, "x", CreateMode::Guarded, SetAttr{}, 0, &id, &at, &w),
            Status::Access);
}

TEST_F(VolumeTest, ReaddirListsEverythingOnceWithDots) {
  std::set<std::string> want = {".", ".."};
  for (int i = 0; i < 300; i++) {
    std::string n = "entry-" + std::to_string(i);
    create_file(*vol_, root_, n);
    want.insert(n);
  }
  std::set<std::string> got;
  uint64_t cookie = 0, verf = 0;
  for (int round = 0; round < 1000; round++) {
    ReaddirResult r;
    ASSERT_EQ(vol_->readdir(ctx_, root_, cookie, verf, 17, true, &r), Status::Ok);
    for (auto& e : r.entries) {
      EXPECT_TRUE(got.insert(e.name).second) << "duplicate " << e.name;
      EXPECT_TRUE(e.attr);
      cookie = e.cookie;
    }
    verf = r.cookieverf;
    if (r.eof) break;
  }
  EXPECT_EQ(got, want);
  ReaddirResult r;
  EXPECT_EQ(vol_->readdir(ctx_, root_, cookie, verf + 1, 10, false, &r), Status::BadCookie);
  EXPECT_EQ(vol_->readdir(ctx_, root_, 12345, verf, 10, false, &r), Status::BadCookie);
}

TEST_F(VolumeTest, FsstatAndCommit) {
  FsStat s;
  std::optional<Attr> a;
  ASSERT_EQ(vol_->fsstat(ctx_, root_, &s, &a), Status::Ok);
  EXPECT_GT(s.total_bytes, 32ull << 20);
  EXPECT_LE(s.free_bytes, s.total_bytes);
  InodeId f = create_file(*vol_, root_, "f");
  ASSERT_EQ(write_at(*vol_, f, 0, pattern(1 << 20, 9), Stability::Unstable), Status::Ok);
  FsStat s2;
  ASSERT_EQ(vol_->fsstat(ctx_, root_, &s2, &a), Status::Ok);
  EXPECT_LE(s2.free_bytes + (1 << 20), s.free_bytes);
  EXPECT_EQ(s2.free_files + 1, s.free_files);
  Wcc w;
  EXPECT_EQ(vol_->commit(ctx_, f, 0, 0, &w), Status::Ok);
  EXPECT_EQ(w.after->size, 1u << 20);
}

TEST_F(VolumeTest, AtimeFollowsConfig) {
  InodeId f = create_file(*vol_, root_, "f");
  ASSERT_EQ(write_at(*vol_, f, 0, pattern(10, 1)), Status::Ok);
  SetAttr old;
  old.atime_how = TimeHow::ClientTime;
  old.atime = Time{100, 0};
  Wcc w;
  ASSERT_EQ(vol_->setattr(ctx_, f, old, std::nullopt, &w), Status::Ok);
  read_at(*vol_, f, 0, 10);
  EXPECT_EQ(getattr(*vol_, f).atime, (Time{100, 0}));  // atime = off
  vol_->close();
  vol_.reset();
  opts_.atime = true;
  vol_ = reopen(opts_);
  read_at(*vol_, f, 0, 10);
  EXPECT_GT(getattr(*vol_, f).atime.sec, 100);
}

TEST_F(VolumeTest, ForcedInodeForReplay) {
  // Every create-type call allocates the inode and generation the journal forces.
  const InodeId forced[] = {{500, 7}, {501, 3}, {502, 9}, {503, 1}};
  call::VolumeReply r[4];
  r[0] = apply_journalled_for_testing(
      *vol_, 39, call::CreateArgs{root_, "r", CreateMode::Guarded, SetAttr{}, 0}, forced[0]);
  r[1] = apply_journalled_for_testing(*vol_, 40, call::MkdirArgs{root_, "d", SetAttr{}},
                                      forced[1]);
  r[2] = apply_journalled_for_testing(*vol_, 41, call::SymlinkArgs{root_, "s", "r", SetAttr{}},
                                      forced[2]);
  r[3] = apply_journalled_for_testing(
      *vol_, 42, call::MknodArgs{root_, "p", FileType::Fifo, SetAttr{}, 0, 0}, forced[3]);
  for (int i = 0; i < 4; i++) {
    ASSERT_EQ(r[i].status, Status::Ok) << i;
    EXPECT_EQ(std::get<call::CreatedResult>(r[i].result).id, forced[i]) << i;
  }
  // A record is applied once: the same guarded CREATE again is what it would be for a client.
  EXPECT_EQ(apply_journalled_for_testing(
                *vol_, 43, call::CreateArgs{root_, "r", CreateMode::Guarded, SetAttr{}, 0},
                forced[0])
                .status,
            Status::Exist);
  // The journal's fields cannot come in through an ordinary call: OpContext is the credential.
  static_assert(sizeof(OpContext) == sizeof(Cred));
  uint64_t durable = 0;
  ASSERT_EQ(vol_->flush(&durable), Status::Ok);
  EXPECT_EQ(durable, 42u);
  EXPECT_EQ(vol_->durable_seq(), 42u);
  // A later normal create still gets a fresh, different number.
  InodeId g = create_file(*vol_, root_, "g");
  EXPECT_NE(g.ino, 500u);
}

TEST_F(VolumeTest, StatusTextMentionsSegmentsAndCache) {
  std::string s = vol_->status_text();
  EXPECT_NE(s.find("segments:"), std::string::npos);
  EXPECT_NE(s.find("cleaner:"), std::string::npos);
  EXPECT_NE(s.find("hit rate"), std::string::npos);
}

}  // namespace
}  // namespace nasd::fs::lfs::testing

namespace nasd::fs::lfs::testing {
namespace {

// Many threads at once (as the server's executors call it): group commit, shared directories,
// background write-behind and cleaner all running; the result must be exact and fsck-clean.
TEST(VolumeConcurrency, ParallelClientsStayConsistent) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path(), 128ull << 20, 1ull << 20);
  o.background_threads = true;
  o.flush_interval_ms = 10;
  auto v = make_volume(o);
  ASSERT_TRUE(v);
  InodeId shared = make_dir(*v, v->root(), "shared");
  constexpr int kThreads = 6, kFiles = 40;
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      OpContext ctx = root_ctx();
      for (int i = 0; i < kFiles; i++) {
        std::string n = "t" + std::to_string(t) + "-" + std::to_string(i);
        InodeId id;
        std::optional<Attr> a;
        Wcc w;
        if (v->create(ctx, shared, n, CreateMode::Guarded, SetAttr{}, 0, &id, &a, &w) != Status::Ok) {
          errors++;
          continue;
        }
        auto data = pattern(5000 + 3000 * (i % 7), uint32_t(t * 1000 + i));
        Stability got;
        Stability mode = i % 3 ? Stability::Unstable : Stability::FileSync;
        if (v->write(ctx, id, 0, data, mode, &got, &w) != Status::Ok) errors++;
        std::vector<uint8_t> back;
        bool eof;
        if (v->read(ctx, id, 0, uint32_t(data.size()), &back, &eof, &a) != Status::Ok ||
            back != data)
          errors++;
        if (i % 4 == 1) {
          Wcc fw, tw;
          if (v->rename(ctx, shared, n, shared, n + ".renamed", &fw, &tw) != Status::Ok) errors++;
        } else if (i % 4 == 2) {
          if (v->remove(ctx, shared, n, &w) != Status::Ok) errors++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  ReaddirResult r;
  ASSERT_EQ(v->readdir(root_ctx(), shared, 0, 0, 4096, false, &r), Status::Ok);
  EXPECT_TRUE(r.eof);
  EXPECT_EQ(r.entries.size(), size_t(2 + kThreads * (kFiles - kFiles / 4)));
  ASSERT_EQ(v->close(), Status::Ok);
  v.reset();
  FsckReport rep = fsck_volume(o);
  EXPECT_TRUE(rep.clean()) << (rep.problems.empty() ? rep.error : rep.problems.front());
}

}  // namespace
}  // namespace nasd::fs::lfs::testing

namespace nasd::fs::lfs::testing {
namespace {

TEST(LfsOptions, FromConfigSection) {
  Config cfg = Config::parse(
      "[volume v0]\nid = 3\nbacking = v0.lfs\nsize = 64M\nsegment_size = 1M\ncache = 16M\n"
      "atime = on\n[volume abs]\nbacking = /dev/null\n[volume bad]\nsegment = 4M\n");
  LfsOptions o = LfsOptions::from_config(*cfg.section("volume", "v0"), cfg, "/data");
  EXPECT_EQ(o.volume_id, 3u);
  EXPECT_EQ(o.backing, "/data/v0.lfs");
  EXPECT_EQ(o.size, 64ull << 20);
  EXPECT_EQ(o.segment_size, 1ull << 20);
  EXPECT_EQ(o.cache_bytes, 16ull << 20);
  EXPECT_TRUE(o.atime);
  EXPECT_EQ(LfsOptions::from_config(*cfg.section("volume", "abs"), cfg, "/data").backing,
            "/dev/null");
  EXPECT_THROW(LfsOptions::from_config(*cfg.section("volume", "bad"), cfg, "/data"), ConfigError);
}

// `cache = auto` (or no cache key): half the memory shared by the config's volumes, within the
// volume's size, never below the old fixed 512 MiB.
TEST(LfsOptions, AutoCacheIsHalfTheMemorySharedByTheVolumesWithinTheVolumeSize) {
  constexpr uint64_t M = 1ull << 20, G = 1ull << 30;
  EXPECT_EQ(auto_cache_bytes(8 * G, 24 * G, 1), 8 * G);     // the volume fits: all of it
  EXPECT_EQ(auto_cache_bytes(64 * G, 24 * G, 1), 12 * G);   // half the memory
  EXPECT_EQ(auto_cache_bytes(8 * G, 24 * G, 16), 768 * M);  // shared by 16 volumes
  EXPECT_EQ(auto_cache_bytes(8 * G, 24 * G, 64), 512 * M);  // never below the floor
  EXPECT_EQ(auto_cache_bytes(64 * M, 24 * G, 1), 512 * M);
  EXPECT_EQ(auto_cache_bytes(8 * G, 0, 1), 512 * M);        // memory unknown

  Config cfg = Config::parse(
      "[volume a]\nsize = 64G\n[volume b]\nsize = 64G\ncache = auto\n[volume c]\ncache = 1G\n");
  const uint64_t expected = auto_cache_bytes(64 * G, physical_memory_bytes(), 3);
  EXPECT_EQ(LfsOptions::from_config(*cfg.section("volume", "a"), cfg, "/d").cache_bytes, expected);
  EXPECT_EQ(LfsOptions::from_config(*cfg.section("volume", "b"), cfg, "/d").cache_bytes, expected);
  EXPECT_EQ(LfsOptions::from_config(*cfg.section("volume", "c"), cfg, "/d").cache_bytes, 1 * G);
  EXPECT_GT(physical_memory_bytes(), 0u);
}

TEST(LfsOptions, OpenOrCreateFormatsOnceThenReopens) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path());
  InodeId f;
  {
    auto v = make_volume(o);
    f = create_file(*v, v->root(), "persist");
    ASSERT_EQ(v->close(), Status::Ok);
  }
  auto v = make_volume(o);  // must not reformat
  InodeId got;
  EXPECT_EQ(lookup(*v, v->root(), "persist", &got), Status::Ok);
  EXPECT_EQ(got, f);
  std::string err;
  LfsOptions missing = o;
  missing.backing = dir.path() + "/nope/vol.lfs";
  EXPECT_FALSE(LfsVolume::open(missing, &err));
  EXPECT_FALSE(err.empty());
}

// A volume whose lease ran out must not touch the shared backing file again: abandon() writes
// nothing (not even what is still buffered), and the volume then refuses calls.
TEST_F(VolumeTest, AbandonWritesNothingAndRefusesCalls) {
  InodeId f = create_file(*vol_, root_, "kept");
  ASSERT_EQ(write_at(*vol_, f, 0, pattern(8192, 3)), Status::Ok);
  InodeId g = create_file(*vol_, root_, "buffered");
  ASSERT_EQ(write_at(*vol_, g, 0, pattern(8192, 4), Stability::Unstable), Status::Ok);
  auto bytes = [&] {
    std::ifstream in(opts_.backing, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string before = bytes();
  vol_->abandon();
  Attr a;
  // Jukebox: the client asks again, and by then the volume's new owner answers.
  EXPECT_EQ(vol_->getattr(ctx_, f, &a), Status::Jukebox);
  EXPECT_EQ(write_at(*vol_, f, 0, pattern(10, 5)), Status::Jukebox);
  uint64_t durable = 0;
  EXPECT_EQ(vol_->flush(&durable), Status::Io);
  vol_.reset();
  EXPECT_TRUE(bytes() == before) << "the backing file changed after abandon()";
  // What was stable survives, as after a crash.
  std::string err;
  auto again = LfsVolume::open(opts_, &err);
  ASSERT_TRUE(again) << err;
  InodeId found;
  ASSERT_EQ(lookup(*again, again->root(), "kept", &found), Status::Ok);
  EXPECT_EQ(read_at(*again, found, 0, 8192), pattern(8192, 3));
  again->close();
}

// The lease check of a shared volume: once the gate closes, nothing reaches the backing file,
// and the stable operation that needed it fails instead of being acknowledged.
TEST(VolumeWriteGate, AClosedGateFailsWritesAndLeavesTheBackingFileAlone) {
  ScratchDir dir;
  LfsOptions opts = small_options(dir.path());
  auto open_gate = std::make_shared<std::atomic<bool>>(true);
  opts.write_gate = std::make_shared<PredicateGate>([open_gate] { return open_gate->load(); });
  auto vol = make_volume(opts);
  ASSERT_TRUE(vol);
  InodeId f = create_file(*vol, vol->root(), "before");
  ASSERT_EQ(write_at(*vol, f, 0, pattern(4096, 1)), Status::Ok);
  auto bytes = [&] {
    std::ifstream in(opts.backing, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string before = bytes();
  open_gate->store(false);
  EXPECT_NE(write_at(*vol, f, 0, pattern(4096, 2)), Status::Ok);
  EXPECT_TRUE(bytes() == before) << "a write passed the closed gate";
  vol->abandon();
}

}  // namespace
}  // namespace nasd::fs::lfs::testing
