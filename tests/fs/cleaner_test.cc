// The cleaner: a small volume filled to 80% survives many full overwrites (the cleaner makes
// room, never NoSpc), then filling it completely gives NoSpc and a clean fsck.
#include <random>

#include <gtest/gtest.h>

#include "fs/lfs/fsck.h"
#include "tests/fs/test_volume.h"

namespace nasd::fs::lfs::testing {
namespace {

constexpr uint32_t kFileBytes = 1u << 20;

void expect_fsck_clean(const LfsOptions& o) {
  FsckReport r = fsck_volume(o);
  EXPECT_TRUE(r.error.empty()) << r.error;
  for (size_t i = 0; i < r.problems.size() && i < 20; i++) ADD_FAILURE() << "fsck: " << r.problems[i];
}

Status write_file(LfsVolume& v, InodeId id, uint32_t seed) {
  auto data = pattern(kFileBytes, seed);
  for (uint32_t off = 0; off < kFileBytes; off += 256 * 1024) {
    std::vector<uint8_t> chunk(data.begin() + off, data.begin() + off + 256 * 1024);
    Status st = write_at(v, id, off, chunk, Stability::Unstable);
    if (st != Status::Ok) return st;
  }
  return Status::Ok;
}

TEST(Cleaner, OverwritesAtEightyPercentThenNoSpcWhenFull) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path(), 64ull << 20, 1ull << 20);
  auto v = make_volume(o);
  ASSERT_TRUE(v);
  FsStat st;
  std::optional<Attr> a;
  ASSERT_EQ(v->fsstat(root_ctx(), v->root(), &st, &a), Status::Ok);
  size_t nfiles = size_t(double(st.total_bytes) * 0.8 / kFileBytes);
  ASSERT_GE(nfiles, 20u);
  std::vector<InodeId> files;
  std::vector<uint32_t> seeds;
  for (size_t i = 0; i < nfiles; i++) {
    files.push_back(create_file(*v, v->root(), "f" + std::to_string(i)));
    seeds.push_back(uint32_t(i + 1));
    ASSERT_EQ(write_file(*v, files.back(), seeds.back()), Status::Ok) << "initial fill " << i;
  }
  // Overwrite three volumes' worth of data at random.
  std::mt19937 rng(7);
  size_t rounds = 3 * (64u << 20) / kFileBytes;
  for (size_t r = 0; r < rounds; r++) {
    size_t i = rng() % files.size();
    seeds[i] = uint32_t(1000 + r);
    ASSERT_EQ(write_file(*v, files[i], seeds[i]), Status::Ok) << "overwrite round " << r;
  }
  const StoreStats& stats = v->store_for_testing().stats();
  EXPECT_GT(stats.cleaned_segments, 10u);
  EXPECT_GT(stats.cleaner_blocks_copied, 0u);
  Wcc w;
  ASSERT_EQ(v->commit(root_ctx(), files[0], 0, 0, &w), Status::Ok);
  for (size_t i = 0; i < files.size(); i++)
    ASSERT_EQ(read_at(*v, files[i], 0, kFileBytes), pattern(kFileBytes, seeds[i])) << "file " << i;
  // Now fill it up: eventually NoSpc, never corruption.
  Status last = Status::Ok;
  size_t extra = 0;
  for (; extra < 200 && last == Status::Ok; extra++) {
    InodeId id;
    std::optional<Attr> at;
    Wcc cw;
    last = v->create(root_ctx(), v->root(), "x" + std::to_string(extra), CreateMode::Guarded,
                     SetAttr{}, 0, &id, &at, &cw);
    if (last == Status::Ok) last = write_file(*v, id, uint32_t(5000 + extra));
  }
  EXPECT_EQ(last, Status::NoSpc);
  EXPECT_EQ(v->commit(root_ctx(), files[0], 0, 0, &w), Status::Ok);
  ASSERT_EQ(v->fsstat(root_ctx(), v->root(), &st, &a), Status::Ok);
  EXPECT_LT(st.free_bytes, 2u * kFileBytes);
  // Overwriting existing data still works on a full volume.
  EXPECT_EQ(write_at(*v, files[1], 0, pattern(4096, 77), Stability::FileSync), Status::Ok);
  ASSERT_EQ(v->close(), Status::Ok);
  v.reset();
  expect_fsck_clean(o);
  v = reopen(o);
  ASSERT_TRUE(v);
  for (size_t i = 2; i < files.size(); i++)
    ASSERT_EQ(read_at(*v, files[i], 0, kFileBytes), pattern(kFileBytes, seeds[i])) << "file " << i;
}

TEST(Cleaner, ReclaimsSegmentsOfDeletedFiles) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path(), 64ull << 20, 1ull << 20);
  auto v = make_volume(o);
  ASSERT_TRUE(v);
  uint32_t free_before = v->store_for_testing().segments().free_count();
  InodeId keep = create_file(*v, v->root(), "keep");
  for (int i = 0; i < 10; i++) {
    InodeId id = create_file(*v, v->root(), "tmp" + std::to_string(i));
    ASSERT_EQ(write_file(*v, id, uint32_t(i)), Status::Ok);
    ASSERT_EQ(write_at(*v, keep, uint64_t(i) * 4096, pattern(4096, 100 + i)), Status::Ok);
  }
  uint32_t free_mid = v->store_for_testing().segments().free_count();
  EXPECT_LT(free_mid + 8, free_before);
  Wcc w;
  for (int i = 0; i < 10; i++)
    ASSERT_EQ(v->remove(root_ctx(), v->root(), "tmp" + std::to_string(i), &w), Status::Ok);
  // Segments shared with "keep" still hold live blocks: only the cleaner can free them.
  v->clean_now(64);
  uint32_t free_after = v->store_for_testing().segments().free_count();
  EXPECT_GE(free_after + 3, free_before);
  for (int i = 0; i < 10; i++)
    EXPECT_EQ(read_at(*v, keep, uint64_t(i) * 4096, 4096), pattern(4096, 100 + i));
  v->close();
  v.reset();
  expect_fsck_clean(o);
}

}  // namespace
}  // namespace nasd::fs::lfs::testing
