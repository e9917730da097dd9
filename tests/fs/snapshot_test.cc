// Snapshots: a retained checkpoint read through `.snapshot`, kept by the cleaner, persistent
// across restarts and crashes, read-only, and freed when deleted; the schedule's plan.
#include <chrono>
#include <cstdio>

#include <gtest/gtest.h>

#include "fs/lfs/checkpoint.h"
#include "fs/lfs/fsck.h"
#include "fs/lfs/snapshot_ids.h"
#include "fs/lfs/snapshot_schedule.h"
#include "tests/fs/test_volume.h"

namespace nasd::fs::lfs::testing {
namespace {

void expect_fsck_clean(const LfsOptions& o) {
  FsckReport r = fsck_volume(o);
  EXPECT_TRUE(r.error.empty()) << r.error;
  for (size_t i = 0; i < r.problems.size() && i < 20; i++) ADD_FAILURE() << "fsck: " << r.problems[i];
}

// DIR/.snapshot/NAME/FILE, or a failing status.
Status snapshot_path(LfsVolume& v, InodeId dir, const std::string& snap, const std::string& file,
                     InodeId* out) {
  InodeId sdir, sroot;
  Status st = lookup(v, dir, ".snapshot", &sdir);
  if (st != Status::Ok) return st;
  if ((st = lookup(v, sdir, snap, &sroot)) != Status::Ok) return st;
  if (file.empty()) {
    *out = sroot;
    return Status::Ok;
  }
  return lookup(v, sroot, file, out);
}

std::vector<std::string> names(LfsVolume& v, InodeId dir) {
  ReaddirResult r;
  EXPECT_EQ(v.readdir(root_ctx(), dir, 0, 0, 1000, true, &r), Status::Ok);
  std::vector<std::string> out;
  for (auto& e : r.entries) out.push_back(e.name);
  return out;
}

uint64_t used_bytes(LfsVolume& v) {
  FsStat st;
  std::optional<Attr> a;
  EXPECT_EQ(v.fsstat(root_ctx(), v.root(), &st, &a), Status::Ok);
  return st.total_bytes - st.free_bytes;
}

TEST(Snapshot, OldVersionReadableThroughSnapshotDirAfterCleanerAndRestart) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path(), 64ull << 20, 1ull << 20);
  auto v = make_volume(o);
  ASSERT_TRUE(v);
  InodeId d = make_dir(*v, v->root(), "d");
  InodeId f = create_file(*v, d, "f");
  auto old_data = pattern(300 * 1024, 1);
  ASSERT_EQ(write_at(*v, f, 0, old_data), Status::Ok);
  InodeId g = create_file(*v, d, "gone");
  ASSERT_EQ(write_at(*v, g, 0, pattern(5000, 2)), Status::Ok);
  SnapshotInfo info;
  ASSERT_EQ(v->snapshot_create("s1", &info), Status::Ok);
  EXPECT_EQ(info.id, 1u);
  EXPECT_EQ(v->snapshot_create("s1", &info), Status::Exist);
  EXPECT_EQ(v->snapshot_create("a/b", &info), Status::Inval);

  // Change everything, many times over, so the cleaner runs through the old segments.
  Wcc w;
  ASSERT_EQ(v->remove(root_ctx(), d, "gone", &w), Status::Ok);
  // About four times the volume's size, so the log wraps around into cleaned segments.
  // Small files that stay make every segment part live, so the cleaner has to copy.
  for (int round = 0; round < 800; round++) {
    ASSERT_EQ(write_at(*v, f, 0, pattern(300 * 1024, 100 + round % 60), Stability::FileSync), Status::Ok);
    InodeId k = create_file(*v, v->root(), "k" + std::to_string(round));
    ASSERT_EQ(write_at(*v, k, 0, pattern(8192, round), Stability::FileSync), Status::Ok);
    if (round % 10 == 0) v->clean_now(8);
  }
  ASSERT_EQ(v->checkpoint_now(), Status::Ok);
  v->clean_now(64);
  EXPECT_GT(v->store_for_testing().stats().cleaned_segments, 10u);

  auto check = [&](LfsVolume& vol) {
    InodeId sf, sg;
    ASSERT_EQ(snapshot_path(vol, d, "s1", "f", &sf), Status::Ok);
    EXPECT_NE(sf.ino, f.ino);
    EXPECT_TRUE(in_snapshot_space(sf.ino));
    EXPECT_EQ(read_at(vol, sf, 0, 300 * 1024), old_data);
    EXPECT_EQ(getattr(vol, sf).fileid, sf.ino);
    ASSERT_EQ(snapshot_path(vol, d, "s1", "gone", &sg), Status::Ok);
    EXPECT_EQ(read_at(vol, sg, 0, 5000), pattern(5000, 2));
    EXPECT_EQ(read_at(vol, f, 0, 300 * 1024), pattern(300 * 1024, 100 + 799 % 60));
    // The root's .snapshot reaches the same file by its full path.
    InodeId sroot, sd, sf2;
    ASSERT_EQ(snapshot_path(vol, vol.root(), "s1", "", &sroot), Status::Ok);
    ASSERT_EQ(lookup(vol, sroot, "d", &sd), Status::Ok);
    ASSERT_EQ(lookup(vol, sd, "f", &sf2), Status::Ok);
    EXPECT_EQ(sf2, sf);
  };
  check(*v);
  ASSERT_EQ(v->close(), Status::Ok);
  v.reset();
  expect_fsck_clean(o);
  v = reopen(o);
  ASSERT_TRUE(v);
  check(*v);
  // A crash (no close) keeps it too.
  ASSERT_EQ(write_at(*v, f, 0, pattern(4096, 7)), Status::Ok);
  v.reset();
  v = reopen(o);
  ASSERT_TRUE(v);
  InodeId sf;
  ASSERT_EQ(snapshot_path(*v, d, "s1", "f", &sf), Status::Ok);
  EXPECT_EQ(read_at(*v, sf, 0, 300 * 1024), old_data);
  ASSERT_EQ(v->close(), Status::Ok);
  expect_fsck_clean(o);
}

TEST(Snapshot, HiddenFromReaddirAndReadOnly) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path());
  auto v = make_volume(o);
  ASSERT_TRUE(v);
  InodeId f = create_file(*v, v->root(), "f");
  ASSERT_EQ(write_at(*v, f, 0, pattern(100, 1)), Status::Ok);
  SnapshotInfo info;
  ASSERT_EQ(v->snapshot_create("nightly", &info), Status::Ok);
  auto root_names = names(*v, v->root());
  EXPECT_EQ(std::count(root_names.begin(), root_names.end(), ".snapshot"), 0);
  InodeId sdir;
  ASSERT_EQ(lookup(*v, v->root(), ".snapshot", &sdir), Status::Ok);
  EXPECT_EQ(names(*v, sdir), (std::vector<std::string>{".", "..", "nightly"}));
  InodeId sroot, sf;
  ASSERT_EQ(lookup(*v, sdir, "nightly", &sroot), Status::Ok);
  EXPECT_EQ(names(*v, sroot), (std::vector<std::string>{".", "..", "f"}));
  ASSERT_EQ(lookup(*v, sroot, "f", &sf), Status::Ok);
  EXPECT_EQ(lookup(*v, sroot, ".snapshot", &sdir), Status::NoEnt);  // no nesting

  Stability got;
  Wcc w;
  std::vector<uint8_t> one{1};
  EXPECT_EQ(v->write(root_ctx(), sf, 0, one, Stability::FileSync, &got, &w), Status::RoFs);
  SetAttr sa;
  sa.mode = 0777;
  EXPECT_EQ(v->setattr(root_ctx(), sf, sa, std::nullopt, &w), Status::RoFs);
  InodeId out;
  std::optional<Attr> a;
  EXPECT_EQ(v->create(root_ctx(), sroot, "new", CreateMode::Unchecked, sa, 0, &out, &a, &w), Status::RoFs);
  EXPECT_EQ(v->mkdir(root_ctx(), sdir, "x", sa, &out, &a, &w), Status::RoFs);
  EXPECT_EQ(v->remove(root_ctx(), sroot, "f", &w), Status::RoFs);
  Wcc w2;
  EXPECT_EQ(v->rename(root_ctx(), sroot, "f", v->root(), "g", &w, &w2), Status::RoFs);
  EXPECT_EQ(v->link(root_ctx(), sf, v->root(), "h", &a, &w), Status::RoFs);
  EXPECT_EQ(v->create(root_ctx(), v->root(), ".snapshot", CreateMode::Unchecked, sa, 0, &out, &a, &w),
            Status::Exist);
  uint32_t granted = 0;
  ASSERT_EQ(v->access(root_ctx(), sf, kAccessRead | kAccessModify | kAccessExtend, &granted, &a), Status::Ok);
  EXPECT_EQ(granted, uint32_t(kAccessRead));
  EXPECT_EQ(read_at(*v, sf, 0, 100), pattern(100, 1));
  ASSERT_EQ(v->close(), Status::Ok);
}

TEST(Snapshot, DeleteFreesItsSpaceAndStalesItsHandles) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path(), 64ull << 20, 1ull << 20);
  auto v = make_volume(o);
  ASSERT_TRUE(v);
  InodeId f = create_file(*v, v->root(), "big");
  constexpr uint32_t kBig = 8u << 20;
  for (uint32_t off = 0; off < kBig; off += 1u << 20)
    ASSERT_EQ(write_at(*v, f, off, pattern(1u << 20, off), Stability::Unstable), Status::Ok);
  ASSERT_EQ(v->checkpoint_now(), Status::Ok);
  SnapshotInfo info;
  ASSERT_EQ(v->snapshot_create("keep", &info), Status::Ok);
  ASSERT_EQ(v->snapshot_create("other", &info), Status::Ok);
  InodeId sf;
  ASSERT_EQ(snapshot_path(*v, v->root(), "keep", "big", &sf), Status::Ok);
  uint64_t before = used_bytes(*v);
  Wcc w;
  ASSERT_EQ(v->remove(root_ctx(), v->root(), "big", &w), Status::Ok);
  ASSERT_EQ(v->checkpoint_now(), Status::Ok);
  v->clean_now(64);
  // The data is still held by the snapshots: removing the file gives nothing back.
  EXPECT_GE(used_bytes(*v) + (1u << 20), before);
  std::vector<LfsVolume::SnapshotListing> list;
  ASSERT_EQ(v->snapshot_list(&list), Status::Ok);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].info.name, "keep");
  EXPECT_LE(list[0].exclusive_bytes, 4096u);  // its table block: "other" holds the rest
  ASSERT_EQ(v->snapshot_delete("other"), Status::Ok);
  ASSERT_EQ(v->snapshot_list(&list), Status::Ok);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_GE(list[0].exclusive_bytes, uint64_t(kBig));
  EXPECT_GT(v->snapshot_held_bytes(), uint64_t(kBig) / 2);
  auto last_mib = pattern(1u << 20, kBig - (1u << 20));
  EXPECT_EQ(read_at(*v, sf, kBig - 4096, 4096), std::vector<uint8_t>(last_mib.end() - 4096, last_mib.end()));

  ASSERT_EQ(v->snapshot_delete("keep"), Status::Ok);
  EXPECT_EQ(v->snapshot_delete("keep"), Status::NoEnt);
  Attr a;
  EXPECT_EQ(v->getattr(root_ctx(), sf, &a), Status::Stale);
  EXPECT_EQ(v->snapshot_held_bytes(), 0u);
  v->clean_now(64);
  EXPECT_LT(used_bytes(*v) + uint64_t(kBig) / 2, before);
  // A new snapshot never reuses the id: the old handle stays stale.
  ASSERT_EQ(v->snapshot_create("keep", &info), Status::Ok);
  EXPECT_EQ(info.id, 3u);
  EXPECT_EQ(v->getattr(root_ctx(), sf, &a), Status::Stale);
  ASSERT_EQ(v->close(), Status::Ok);
  v = reopen(o);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->getattr(root_ctx(), sf, &a), Status::Stale);
  ASSERT_EQ(v->close(), Status::Ok);
  expect_fsck_clean(o);
}

// A crash after the snapshot's log group but before its checkpoint region: the previous
// checkpoint wins, and the volume has no snapshot and is consistent.
TEST(Snapshot, CrashBeforeItsCheckpointLeavesNoSnapshot) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path());
  auto v = make_volume(o);
  ASSERT_TRUE(v);
  InodeId f = create_file(*v, v->root(), "f");
  ASSERT_EQ(write_at(*v, f, 0, pattern(9000, 3)), Status::Ok);
  ASSERT_EQ(v->checkpoint_now(), Status::Ok);
  SnapshotInfo info;
  ASSERT_EQ(v->snapshot_create("half", &info), Status::Ok);
  Superblock sb = v->store_for_testing().superblock();
  v.reset();  // crash
  // Find and destroy the newest checkpoint region: the one that lists the snapshot.
  std::string err;
  auto dev = BlockDevice::open(o.backing, 0, &err);
  ASSERT_TRUE(dev) << err;
  std::vector<uint8_t> buf(size_t(sb.cp_blocks) * kBlockSize);
  int newest = -1;
  uint64_t best = 0;
  for (int r = 0; r < 2; r++) {
    Checkpoint cp;
    ASSERT_TRUE(dev->read(sb.cp_block[r], sb.cp_blocks, buf.data()));
    if (decode_checkpoint(buf.data(), buf.size(), sb, &cp) && cp.seq > best) {
      best = cp.seq;
      newest = r;
      EXPECT_NE(cp.catalog_addr, kNoAddr);
    }
  }
  ASSERT_GE(newest, 0);
  std::vector<uint8_t> zero(kBlockSize, 0);
  ASSERT_TRUE(dev->write(sb.cp_block[newest], zero.data(), 1));
  ASSERT_TRUE(dev->sync());
  dev.reset();
  v = reopen(o);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->store_for_testing().snapshot_catalog().snapshots.empty());
  InodeId sf;
  EXPECT_EQ(snapshot_path(*v, v->root(), "half", "f", &sf), Status::NoEnt);
  EXPECT_EQ(read_at(*v, f, 0, 9000), pattern(9000, 3));
  ASSERT_EQ(v->close(), Status::Ok);
  expect_fsck_clean(o);
  v = reopen(o);
  ASSERT_EQ(v->snapshot_create("half", &info), Status::Ok);
  ASSERT_EQ(snapshot_path(*v, v->root(), "half", "f", &sf), Status::Ok);
  EXPECT_EQ(read_at(*v, sf, 0, 9000), pattern(9000, 3));
  ASSERT_EQ(v->close(), Status::Ok);
  expect_fsck_clean(o);
}

TEST(Snapshot, FormatOneVolumeUpgradesAtFirstSnapshot) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path());
  auto v = make_volume(o);
  ASSERT_TRUE(v);
  ASSERT_EQ(v->close(), Status::Ok);
  Superblock sb = v->store_for_testing().superblock();
  v.reset();
  std::string err;
  auto dev = BlockDevice::open(o.backing, 0, &err);
  ASSERT_TRUE(dev);
  alignas(kBlockSize) uint8_t blk[kBlockSize];
  sb.version = 1;
  encode_superblock(sb, blk);
  ASSERT_TRUE(dev->write(0, blk, 1));
  dev.reset();
  v = reopen(o);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->store_for_testing().superblock().version, 1u);
  SnapshotInfo info;
  ASSERT_EQ(v->snapshot_create("first", &info), Status::Ok);
  EXPECT_EQ(v->store_for_testing().superblock().version, kFormatVersion);
  ASSERT_EQ(v->close(), Status::Ok);
  v = reopen(o);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->store_for_testing().superblock().version, kFormatVersion);
  ASSERT_EQ(v->close(), Status::Ok);
  // A newer format is refused with a reason.
  sb.version = kFormatVersion + 1;
  encode_superblock(sb, blk);
  Superblock back;
  std::string why;
  EXPECT_FALSE(decode_superblock(blk, &back, &why));
  EXPECT_NE(why.find("format version 3"), std::string::npos) << why;
}

TEST(SnapshotSchedule, ParsesAppliancesRulesAndRefusesBadOnes) {
  auto s = SnapshotSchedule::parse("hourly:24, daily:7 ,10s:3");
  ASSERT_EQ(s.rules.size(), 3u);
  EXPECT_EQ(s.rules[0].period, 3600);
  EXPECT_EQ(s.rules[1].keep, 7u);
  EXPECT_EQ(s.rules[2].label, "every10s");
  EXPECT_TRUE(SnapshotSchedule::parse("").empty());
  for (const char* bad : {"hourly", "hourly:0", "fortnightly:2", "5x:2", "hourly:2,hourly:3",
                          "hourly:30,daily:20", "0s:1", "daily:-1"})
    EXPECT_THROW(SnapshotSchedule::parse(bad), std::invalid_argument) << bad;
}

TEST(SnapshotSchedule, TakesOncePerPeriodAndExpiresTheOldest) {
  auto s = SnapshotSchedule::parse("10s:2");
  std::vector<SnapshotInfo> existing{{1, "manual", 5, 0, 0, 0}};
  int64_t t = 1'000'000'003;
  auto p = plan_snapshots(s, existing, t);
  ASSERT_EQ(p.create.size(), 1u);
  EXPECT_EQ(p.create[0], "every10s.2001-09-09_014640");
  EXPECT_TRUE(p.remove.empty());
  existing.push_back({2, p.create[0], t, 0, 0, 0});
  EXPECT_TRUE(plan_snapshots(s, existing, t + 5).create.empty());
  p = plan_snapshots(s, existing, t + 10);
  ASSERT_EQ(p.create.size(), 1u);
  existing.push_back({3, p.create[0], t + 10, 0, 0, 0});
  p = plan_snapshots(s, existing, t + 20);
  ASSERT_EQ(p.create.size(), 1u);
  ASSERT_EQ(p.remove.size(), 1u);
  EXPECT_EQ(p.remove[0], "every10s.2001-09-09_014640");  // never "manual"
  EXPECT_EQ(scheduled_name("daily", 0), "daily.1970-01-01_000000");
}

TEST(SnapshotSchedule, VolumeRunsItsSchedule) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path());
  o.snapshot_schedule = "1s:2";
  auto v = make_volume(o);
  ASSERT_TRUE(v);
  int64_t t = 2'000'000'000;
  for (int i = 0; i < 4; i++) v->run_snapshot_schedule(t + i);
  const auto& snaps = v->store_for_testing().snapshot_catalog().snapshots;
  ASSERT_EQ(snaps.size(), 2u);
  EXPECT_EQ(snaps[0].name, scheduled_name("every1s", t + 2));
  EXPECT_EQ(snaps[1].name, scheduled_name("every1s", t + 3));
  ASSERT_EQ(v->close(), Status::Ok);
  expect_fsck_clean(o);
}

}  // namespace
}  // namespace nasd::fs::lfs::testing

namespace nasd::fs::lfs::testing {
namespace {

// Hand-run measurement (not part of the suite):
//   build/tests/fs/nasd_fs_tests --gtest_also_run_disabled_tests --gtest_filter='*DISABLED_Cost*'
// Prints what taking a snapshot costs against a plain checkpoint, and reading a snapshot's
// files against reading the live ones.
TEST(SnapshotCost, DISABLED_CostOfTakingAndReading) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path(), 512ull << 20, 4ull << 20);
  auto v = make_volume(o);
  ASSERT_TRUE(v);
  constexpr int kFiles = 20000;
  std::vector<InodeId> files;
  for (int i = 0; i < kFiles; i++) {
    files.push_back(create_file(*v, v->root(), "f" + std::to_string(i)));
    ASSERT_EQ(write_at(*v, files.back(), 0, pattern(4096, i), Stability::Unstable), Status::Ok);
  }
  ASSERT_EQ(v->checkpoint_now(), Status::Ok);
  auto time = [](auto&& fn) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  ASSERT_EQ(write_at(*v, files[0], 0, pattern(4096, 1)), Status::Ok);
  double cp = time([&] { ASSERT_EQ(v->checkpoint_now(), Status::Ok); });
  SnapshotInfo info;
  ASSERT_EQ(write_at(*v, files[0], 0, pattern(4096, 2)), Status::Ok);
  double first = time([&] { ASSERT_EQ(v->snapshot_create("s0", &info), Status::Ok); });
  for (int s = 1; s < 4; s++) {
    double t = time([&] { ASSERT_EQ(v->snapshot_create("s" + std::to_string(s), &info), Status::Ok); });
    std::printf("snapshot %d: %.1f ms\n", s + 1, t);
  }
  ASSERT_EQ(write_at(*v, files[0], 0, pattern(4096, 3)), Status::Ok);
  double fifth = time([&] { ASSERT_EQ(v->snapshot_create("s4", &info), Status::Ok); });
  ASSERT_EQ(v->close(), Status::Ok);
  v = reopen(o);
  double live_read = time([&] {
    for (int i = 0; i < kFiles; i++) read_at(*v, files[i], 0, 4096);
  });
  InodeId sroot;
  ASSERT_EQ(snapshot_path(*v, v->root(), "s0", "", &sroot), Status::Ok);
  double snap_read = time([&] {
    for (int i = 0; i < kFiles; i++) {
      InodeId f;
      ASSERT_EQ(lookup(*v, sroot, "f" + std::to_string(i), &f), Status::Ok);
      read_at(*v, f, 0, 4096);
    }
  });
  double live_lookup_read = time([&] {
    for (int i = 0; i < kFiles; i++) {
      InodeId f;
      ASSERT_EQ(lookup(*v, v->root(), "f" + std::to_string(i), &f), Status::Ok);
      read_at(*v, f, 0, 4096);
    }
  });
  std::printf("%d files: checkpoint %.1f ms, first snapshot %.1f ms (%.2fx), fifth %.1f ms (%.2fx)\n",
              kFiles, cp, first, first / cp, fifth, fifth / cp);
  std::printf("lookup+read of every file: live %.1f ms, snapshot %.1f ms (%.2fx); reads only, live %.1f ms\n",
              live_lookup_read, snap_read, snap_read / live_lookup_read, live_read);
  ASSERT_EQ(v->close(), Status::Ok);
}

}  // namespace
}  // namespace nasd::fs::lfs::testing
