// Recovery: reopening after a "crash" (the volume object dropped without close()) keeps every
// durable operation, ignores a torn last unit, and survives a torn checkpoint.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "fs/lfs/checkpoint.h"
#include "fs/lfs/fsck.h"
#include "tests/fs/test_volume.h"

namespace nasd::fs::lfs::testing {
namespace {

// Overwrites `n` bytes at byte offset `off` of the backing file.
void scribble(const std::string& path, uint64_t off, size_t n, uint8_t value) {
  int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> junk(n, value);
  ASSERT_EQ(pwrite(fd, junk.data(), n, off_t(off)), ssize_t(n));
  ::close(fd);
}

void expect_fsck_clean(const LfsOptions& o) {
  FsckReport r = fsck_volume(o);
  EXPECT_TRUE(r.error.empty()) << r.error;
  for (auto& p : r.problems) ADD_FAILURE() << "fsck: " << p;
}

TEST(Recovery, StableOperationsSurviveCrash) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path());
  InodeId f, d, g;
  auto data = pattern(300000, 11);
  {
    auto v = make_volume(o);
    d = make_dir(*v, v->root(), "dir");
    f = create_file(*v, d, "file");
    ASSERT_EQ(write_at(*v, f, 0, data), Status::Ok);
    g = create_file(*v, v->root(), "gone");
    Wcc w;
    ASSERT_EQ(v->remove(root_ctx(), v->root(), "gone", &w), Status::Ok);
    Wcc fw, tw;
    ASSERT_EQ(v->rename(root_ctx(), d, "file", v->root(), "moved", &fw, &tw), Status::Ok);
    // Dropped without close(): no checkpoint, recovery must roll the log forward.
  }
  expect_fsck_clean(o);
  auto v = reopen(o);
  ASSERT_TRUE(v);
  EXPECT_GT(v->store_for_testing().stats().recovered_units, 0u);
  InodeId got;
  ASSERT_EQ(lookup(*v, v->root(), "moved", &got), Status::Ok);
  EXPECT_EQ(got, f);
  EXPECT_EQ(read_at(*v, f, 0, 400000), data);
  EXPECT_EQ(lookup(*v, d, "file", &got), Status::NoEnt);
  EXPECT_EQ(lookup(*v, v->root(), "gone", &got), Status::NoEnt);
  Attr a;
  EXPECT_EQ(v->getattr(root_ctx(), g, &a), Status::Stale);
  v->close();
  expect_fsck_clean(o);
}

TEST(Recovery, UnstableDataMayBeLostButVerifierChanges) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path());
  uint64_t verf;
  InodeId f;
  {
    auto v = make_volume(o);
    verf = v->write_verifier();
    f = create_file(*v, v->root(), "f");
    ASSERT_EQ(write_at(*v, f, 0, pattern(8192, 1), Stability::Unstable), Status::Ok);
  }
  auto v = reopen(o);
  EXPECT_NE(v->write_verifier(), verf);
  Attr a = getattr(*v, f);  // the create was stable
  EXPECT_EQ(a.type, FileType::Reg);
  expect_fsck_clean(o);
}

// Where the unit that starts at `head` lives on disk (the writer moves on to the next segment
// when fewer than two blocks are left).
uint64_t unit_block(const Superblock& sb, const LogPosition& head) {
  if (head.off + 2 > sb.segment_blocks) return sb.segment_start(head.next_seg);
  return sb.segment_start(head.seg) + head.off;
}

void torn_unit_case(bool tear_summary) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path());
  auto first = pattern(50000, 3);
  uint64_t victim;
  InodeId a;
  {
    auto v = make_volume(o);
    a = create_file(*v, v->root(), "a");
    ASSERT_EQ(write_at(*v, a, 0, first), Status::Ok);
    Store& s = v->store_for_testing();
    victim = unit_block(s.superblock(), s.log_head());
    InodeId b = create_file(*v, v->root(), "b");
    ASSERT_EQ(write_at(*v, b, 0, pattern(9000, 4)), Status::Ok);
  }
  // Tear the unit of "create b": either its summary or one of its blocks.
  scribble(o.backing, (victim + (tear_summary ? 0 : 1)) * kBlockSize + 100, 64, 0xA5);
  expect_fsck_clean(o);
  auto v = reopen(o);
  ASSERT_TRUE(v);
  InodeId got;
  EXPECT_EQ(lookup(*v, v->root(), "b", &got), Status::NoEnt);
  ASSERT_EQ(lookup(*v, v->root(), "a", &got), Status::Ok);
  EXPECT_EQ(read_at(*v, a, 0, 60000), first);
  // The log continues cleanly over the torn unit.
  InodeId c = create_file(*v, v->root(), "c");
  ASSERT_EQ(write_at(*v, c, 0, pattern(5000, 5)), Status::Ok);
  v.reset();
  expect_fsck_clean(o);
  v = reopen(o);
  EXPECT_EQ(read_at(*v, c, 0, 5000), pattern(5000, 5));
  EXPECT_EQ(lookup(*v, v->root(), "b", &got), Status::NoEnt);
}

TEST(Recovery, TornSummaryEndsTheLog) { torn_unit_case(true); }
TEST(Recovery, TornDataBlockEndsTheLog) { torn_unit_case(false); }

TEST(Recovery, TornCheckpointFallsBackToTheOlderOne) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path());
  auto data = pattern(70000, 8);
  InodeId f;
  Superblock sb;
  {
    auto v = make_volume(o);
    f = create_file(*v, v->root(), "f");
    ASSERT_EQ(v->checkpoint_now(), Status::Ok);
    ASSERT_EQ(write_at(*v, f, 0, data), Status::Ok);
    ASSERT_EQ(v->checkpoint_now(), Status::Ok);
    sb = v->store_for_testing().superblock();
  }
  // Find the region holding the newest checkpoint and tear it.
  std::string err;
  auto dev = BlockDevice::open(o.backing, 0, &err);
  ASSERT_TRUE(dev) << err;
  uint64_t best_seq = 0;
  int best = -1;
  std::vector<uint8_t> buf(size_t(sb.cp_blocks) * kBlockSize);
  for (int r = 0; r < 2; r++) {
    Checkpoint cp;
    ASSERT_TRUE(dev->read(sb.cp_block[r], sb.cp_blocks, buf.data()));
    if (decode_checkpoint(buf.data(), buf.size(), sb, &cp) && cp.seq > best_seq) {
      best_seq = cp.seq;
      best = r;
    }
  }
  ASSERT_GE(best, 0);
  dev.reset();
  scribble(o.backing, sb.cp_block[best] * kBlockSize + 200, 16, 0x5A);
  expect_fsck_clean(o);
  auto v = reopen(o);
  ASSERT_TRUE(v);
  // The older checkpoint predates the write; roll-forward brings it back.
  EXPECT_EQ(read_at(*v, f, 0, 80000), data);
}

}  // namespace
}  // namespace nasd::fs::lfs::testing
