// Cache budget: reading far more data than the budget keeps the cache within it; the LRU keeps
// recently used blocks; fsck detects real corruption (so its "clean" verdicts mean something).
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "fs/lfs/block_cache.h"
#include "fs/lfs/block_map.h"
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

// The index is per inode and per 64-block extent, with the last data and node extents
// remembered: checked against a plain ordered set under a random stream of inserts, finds,
// erases, evictions and range walks over a few inodes, data keys that cross extent boundaries
// and block-map node keys (a remembered extent used after its last block went would show here
// as a wrong find or a crash under ASan).
TEST(BlockCache, IndexAgreesWithAnOrderedModelUnderRandomOperations) {
  BlockCache c(48 * kBlockSize);
  std::set<std::pair<uint64_t, uint64_t>> model;
  std::mt19937_64 rng(12);
  auto random_key = [&] {
    uint64_t k = rng() % 300;  // data blocks spanning five extents
    if (rng() % 5 == 0) k = node_key(NodeId{uint32_t(rng() % 4), 1 + uint32_t(rng() % 2), rng() % 70});
    return k;
  };
  for (int step = 0; step < 20000; step++) {
    const uint64_t ino = 1 + rng() % 3, key = random_key();
    const bool cached = model.count({ino, key}) > 0;
    switch (rng() % 6) {
      case 0:
      case 1:
        if (!cached) {
          CachedBlock* b = c.insert(ino, key, BlockCache::Fill::Uninitialized);
          ASSERT_EQ(b->ino, ino);
          ASSERT_EQ(b->key, key);
          if (rng() % 3 == 0) c.mark_dirty(b);
          model.insert({ino, key});
        }
        break;
      case 2: {
        CachedBlock* b = c.find(ino, key);
        ASSERT_EQ(b != nullptr, cached) << "ino " << ino << " key " << key << " step " << step;
        if (b) {
          ASSERT_EQ(b->ino, ino);
          ASSERT_EQ(b->key, key);
        }
        break;
      }
      case 3:
        if (CachedBlock* b = c.find(ino, key)) {
          c.erase(b);
          model.erase({ino, key});
        }
        break;
      case 4: {
        c.trim();
        std::set<std::pair<uint64_t, uint64_t>> left;
        for (const auto& [i, k] : model)
          if (c.find(i, k)) left.insert({i, k});
        model = left;
        ASSERT_LE(c.bytes(), c.budget() + c.dirty_count() * kBlockSize);
        break;
      }
      case 5: {
        uint64_t from = rng() % 320, to = from + rng() % 200;
        if (rng() % 4 == 0) from = kNodeKeyBit, to = UINT64_MAX;
        std::vector<uint64_t> want, got;
        for (auto it = model.lower_bound({ino, from}); it != model.end() && it->first == ino &&
                                                        it->second < to;
             ++it)
          want.push_back(it->second);
        for (CachedBlock* b : c.range(ino, from, to)) got.push_back(b->key);
        ASSERT_EQ(got, want) << "range [" << from << ", " << to << ") of ino " << ino;
        if (rng() % 8 == 0)  // drop a whole range, as truncate and release do
          for (CachedBlock* b : c.range(ino, from, to)) {
            c.erase(b);
            model.erase({ino, b->key});
          }
        break;
      }
    }
    ASSERT_EQ(c.size(), model.size()) << "step " << step;
  }
  for (uint64_t ino = 1; ino <= 3; ino++)
    for (CachedBlock* b : c.range(ino, 0, UINT64_MAX)) c.erase(b);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(c.pool().in_use(), 0u);
}

// The write and read paths through the block map and the cache index: overwrites that straddle
// 256 KiB extent boundaries, a truncate into the middle of an extent, regrowth over the hole,
// all compared byte for byte with a model file, before and after a crash (no close) and reopen.
TEST(CacheIndex, OverwritesAndTruncatesAcrossExtentsReadBackAfterCrash) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path(), 128ull << 20, 1ull << 20);
  o.cache_bytes = 2ull << 20;  // smaller than the file: blocks come and go from the cache
  std::vector<uint8_t> model;
  InodeId f;
  auto apply = [&](LfsVolume& v, uint64_t off, const std::vector<uint8_t>& d,
                   Stability how = Stability::FileSync) {
    ASSERT_EQ(write_at(v, f, off, d, how), Status::Ok);
    if (model.size() < off + d.size()) model.resize(off + d.size(), 0);
    std::copy(d.begin(), d.end(), model.begin() + off);
  };
  auto check = [&](LfsVolume& v) {
    ASSERT_EQ(getattr(v, f).size, model.size());
    for (uint64_t off = 0; off < model.size(); off += 1 << 20) {
      uint32_t n = uint32_t(std::min<uint64_t>(1 << 20, model.size() - off));
      auto got = read_at(v, f, off, n);
      ASSERT_TRUE(std::equal(got.begin(), got.end(), model.begin() + off) && got.size() == n)
          << "at offset " << off;
    }
  };
  {
    auto v = make_volume(o);
    f = create_file(*v, v->root(), "f");
    for (int i = 0; i < 6; i++) apply(*v, uint64_t(i) << 20, pattern(1 << 20, i));
    apply(*v, (256 << 10) - 100, pattern(8192, 50));           // across extent 0 -> 1
    apply(*v, (3u << 20) - 4096 * 3 + 7, pattern(70000, 51));  // across 3 MiB, unaligned
    // Dirty (UNSTABLE) blocks in the extent the truncate cuts, on both sides of the cut: those
    // below it must survive the truncate, those above must go.
    apply(*v, (4u << 20) + (60 << 10) + 5, pattern(90000, 54), Stability::Unstable);
    SetAttr sa;
    sa.size = (4u << 20) + (100 << 10) + 123;  // mid extent, mid block
    Wcc w;
    ASSERT_EQ(v->setattr(root_ctx(), f, sa, std::nullopt, &w), Status::Ok);
    model.resize(*sa.size);
    apply(*v, (5u << 20) + 4096 * 10, pattern(300000, 52));  // regrow past a hole
    check(*v);
    apply(*v, (4u << 20), pattern(4096 * 64, 53));             // one whole extent
    check(*v);
    // Crash: no close, no flush beyond what FILE_SYNC made durable.
    v->abandon();
  }
  auto v = reopen(o);
  check(*v);
  ASSERT_EQ(v->close(), Status::Ok);
  EXPECT_TRUE(fsck_volume(o).clean());
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
