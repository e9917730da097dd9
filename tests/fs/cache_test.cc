// Cache budget: reading far more data than the budget keeps the cache within it; the LRU keeps
// recently used blocks; fsck detects real corruption (so its "clean" verdicts mean something).
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "fs/lfs/block_cache.h"
#include "fs/lfs/block_pool.h"
#include "fs/lfs/fsck.h"
#include "tests/fs/test_volume.h"

namespace nasd::fs::lfs::testing {
namespace {

TEST(BlockCache, EvictsLeastRecentlyUsedCleanBlocksOnly) {
  BlockCache c(4 * kBlockSize);
  for (uint64_t k = 0; k < 4; k++) c.insert(1, k);
  CachedBlock* dirty = c.insert(1, 4);
  c.mark_dirty(dirty);
  c.find(1, 0);  // 0 becomes the most recently used
  c.trim();
  EXPECT_EQ(c.size(), 4u);
  EXPECT_TRUE(c.find(1, 0));
  EXPECT_FALSE(c.find(1, 1));  // the oldest clean one went
  EXPECT_TRUE(c.find(1, 4));   // dirty blocks are pinned
  EXPECT_EQ(c.range(1, 0, 100).size(), 4u);
  c.mark_clean(dirty);
  EXPECT_EQ(c.dirty_count(), 0u);
}

TEST(BlockPool, ReusesReleasedBuffersWithoutGrowing) {
  BlockPool pool(kBlockSize, 4);
  uint8_t* a = pool.acquire();
  uint8_t* b = pool.acquire();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % kBlockSize, 0u);
  EXPECT_NE(a, b);
  EXPECT_EQ(pool.in_use(), 2u);
  pool.release(a);
  EXPECT_EQ(pool.acquire(), a);  // the most recently freed (warmest) buffer comes back first
  for (int round = 0; round < 1000; round++) {
    std::vector<uint8_t*> got;
    for (int i = 0; i < 4; i++) got.push_back(pool.acquire());
    for (uint8_t* p : got) pool.release(p);
  }
  // 2 held + 4 per round never needs more than two slabs of four.
  EXPECT_EQ(pool.slabs(), 2u);
  EXPECT_EQ(pool.in_use(), 2u);
  pool.release(a);
  pool.release(b);
  EXPECT_EQ(pool.in_use(), 0u);
  EXPECT_EQ(pool.free_count(), 8u);
}

TEST(BlockCache, EvictedBlocksGoBackToThePoolAndZeroFillStillZeroes) {
  BlockCache c(2 * kBlockSize);
  for (uint64_t k = 0; k < 64; k++) {
    CachedBlock* b = c.insert(1, k, BlockCache::Fill::Uninitialized);
    std::memset(b->data, 0xAB, kBlockSize);  // what a WRITE or a disk read leaves behind
    c.trim();
  }
  EXPECT_LE(c.pool().in_use(), 2u);
  EXPECT_LE(c.pool().slabs(), 1u);  // a stream of inserts recycles the evicted buffers
  // A recycled buffer held 0xAB; a zero-filled insert must not show any of it.
  CachedBlock* z = c.insert(2, 0);
  for (uint32_t i = 0; i < kBlockSize; i++) ASSERT_EQ(z->data[i], 0) << "byte " << i;
}

// A buffer still referenced by a cached (here dirty, pinned) block must never be handed to
// another block, however many blocks come and go around it.
TEST(BlockCache, APinnedBlocksBufferIsNeverReusedWhileReferenced) {
  BlockCache c(4 * kBlockSize);
  CachedBlock* pinned = c.insert(7, 0, BlockCache::Fill::Uninitialized);
  std::memset(pinned->data, 0x11, kBlockSize);
  c.mark_dirty(pinned);
  const uint8_t* held = pinned->data;
  for (uint64_t k = 1; k < 2000; k++) {
    CachedBlock* b = c.insert(8, k, BlockCache::Fill::Uninitialized);
    ASSERT_NE(b->data, held) << "block " << k << " got a buffer that is still in use";
    std::memset(b->data, 0xEE, kBlockSize);
    if (k % 3 == 0) c.erase(b);
    c.trim();
  }
  for (uint32_t i = 0; i < kBlockSize; i++) ASSERT_EQ(pinned->data[i], 0x11) << "byte " << i;
}

TEST(CacheBudget, ReadingMoreThanTheBudgetStaysWithinIt) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path(), 128ull << 20, 1ull << 20);
  o.cache_bytes = 4ull << 20;
  auto v = make_volume(o);
  InodeId f = create_file(*v, v->root(), "big");
  for (int i = 0; i < 24; i++)
    ASSERT_EQ(write_at(*v, f, uint64_t(i) << 20, pattern(1 << 20, i), Stability::Unstable),
              Status::Ok);
  Wcc w;
  ASSERT_EQ(v->commit(root_ctx(), f, 0, 0, &w), Status::Ok);
  for (int i = 0; i < 24; i++) EXPECT_EQ(read_at(*v, f, uint64_t(i) << 20, 1 << 20), pattern(1 << 20, i));
  read_at(*v, f, 0, 4096);  // trims on entry
  const BlockCache& bc = v->store_for_testing().block_cache();
  EXPECT_LE(bc.bytes(), bc.budget() + (1u << 20));
  EXPECT_GT(bc.misses(), 0u);
  for (int k = 0; k < 10; k++) read_at(*v, f, 23u << 20, 4096);
  EXPECT_GT(bc.hits(), 9u);
}

TEST(Fsck, ReportsCorruption) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path());
  {
    auto v = make_volume(o);
    InodeId d = make_dir(*v, v->root(), "d");
    for (int i = 0; i < 50; i++) create_file(*v, d, "f" + std::to_string(i));
    ASSERT_EQ(v->close(), Status::Ok);
  }
  ASSERT_TRUE(fsck_volume(o).clean());
  // Overwrite the directory "d"'s bucket block with garbage (keeping the checksum layer out of
  // it: fsck must catch structural damage the log layer cannot see).
  std::string err;
  LfsOptions ro = o;
  ro.read_only = true;
  uint64_t bucket_addr = 0;
  {
    auto s = Store::open(ro, &err);
    ASSERT_TRUE(s) << err;
    CachedInode* root;
    ASSERT_EQ(s->load(kRootIno, &root), Status::Ok);
    DirRecord rec;
    bool found;
    ASSERT_EQ(Directory(s.get(), root).lookup("d", &rec, &found), Status::Ok);
    ASSERT_TRUE(found);
    CachedInode* d;
    ASSERT_EQ(s->load(rec.ino, &d), Status::Ok);
    bucket_addr = d->inode.direct[1];
  }
  ASSERT_NE(bucket_addr, 0u);
  int fd = ::open(o.backing.c_str(), O_WRONLY);
  std::vector<uint8_t> junk(200, 0x33);
  ASSERT_EQ(pwrite(fd, junk.data(), junk.size(), off_t(bucket_addr * kBlockSize + 40)), 200);
  ::close(fd);
  FsckReport r = fsck_volume(o);
  EXPECT_FALSE(r.clean());
  EXPECT_FALSE(r.problems.empty());
}

}  // namespace
}  // namespace nasd::fs::lfs::testing
