// Cache of file blocks (data and block-map nodes) keyed by (inode, key) rather than by disk
// address, because in a log-structured volume a block gets a new address on every write.
// Dirty blocks are pinned until a flush writes them; clean ones sit on an LRU list (Boost.Intrusive)
// and are evicted when the cache exceeds its byte budget. Block buffers come from a BlockPool
// (block_pool.h) and go back to it on eviction, so a steady stream of writes reuses warm memory
// instead of faulting fresh pages in.
//
// The index is per inode and per extent, not one ordered map of every block: a hash table of
// inodes, each with an ordered map of 64-block extents (256 KiB of file) whose slots point at
// the cached blocks. A 1 MiB WRITE used to do ~5 lookups per 4 KiB block in one std::map of
// ~130k entries (a pointer chase of ~17 cache-missing nodes each; LfsVolume::write was 26% of a
// sequential write's CPU). Now a lookup is a slot in an extent, and the last extent used for
// data and for block-map nodes of the last inode is remembered, so a sequential stream touches
// the maps once per 64 blocks. Ordered walks (flush, truncate) follow the extents in key order.
//
// Invariants: a block is in exactly one slot of exactly one extent; an extent with no blocks
// and an inode with no extents are removed at once (so the remembered extents never dangle:
// they are forgotten when their extent goes).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <boost/intrusive/list.hpp>

#include "fs/lfs/block_pool.h"
#include "fs/lfs/layout.h"

namespace nasd::fs::lfs {

struct CachedBlock : public boost::intrusive::list_base_hook<> {
  // `data` comes from `pool` and goes back to it when the block is destroyed (or, when a pin
  // still holds it then, when the pin goes).
  // `adopted` (held by the caller, who gives its reference to the block) becomes the block's
  // buffer; null takes a fresh one from `pool`.
  CachedBlock(uint64_t i, uint64_t k, BlockPool* pool, BlockBuffer* adopted = nullptr);
  ~CachedBlock();
  CachedBlock(const CachedBlock&) = delete;
  CachedBlock& operator=(const CachedBlock&) = delete;
  // From a pool of block descriptors (Boost.Pool): a WRITE that adds a block to a file
  // allocates nothing once the cache has held as many blocks before.
  static void* operator new(size_t size);
  static void operator delete(void* p, size_t size);

  // A reference to `data` for someone who reads it after the volume's lock is gone (a READ
  // reply being sent): the bytes stay as they are until BlockPool::unref(). Call with the
  // volume locked (either side).
  BlockBuffer* pin() const {
    BlockPool::ref(buf_);
    return buf_;
  }
  // Before writing `data`: when a pin shares the buffer, moves this block to a buffer of its
  // own (copying the bytes when `keep_contents`), so the pin keeps seeing the old bytes. Call
  // with the volume's exclusive lock held (no new pin can appear meanwhile).
  void unshare(bool keep_contents);
  // Makes `adopted` (its reference given by the caller) this block's buffer in place of the
  // current one, as a WRITE that covers the whole block would overwrite it: a pin on the old
  // buffer keeps the old bytes, as unshare() would. Call with the volume's exclusive lock held.
  void take_buffer(BlockBuffer* adopted);

  uint64_t ino;
  uint64_t key;             // file block number, or a block-map node key
  uint64_t addr = kNoAddr;  // where the on-disk copy lives (the pointer in the block map)
  bool dirty = false;
  bool fresh = false;       // dirty and not yet on disk: counted as a pending allocation
  uint8_t* data;            // kBlockSize bytes, block aligned (O_DIRECT friendly)

 private:
  BlockPool* pool_;
  BlockBuffer* buf_;  // data == buf_->data; this block holds one of its references
};

class BlockCache {
 public:
  explicit BlockCache(uint64_t budget_bytes)
      : budget_(budget_bytes), pool_(std::make_shared<BlockPool>(kBlockSize)) {}
  ~BlockCache();

  // nullptr on a miss. A hit moves a clean block to the MRU end.
  CachedBlock* find(uint64_t ino, uint64_t key);
  // find() for readers that run at once with each other while nobody changes the cache (the
  // volume's shared lock): the index is only read (not even the memo of the last extent), and
  // the MRU move and hit count take touch_mu_.
  CachedBlock* find_shared(uint64_t ino, uint64_t key);
  // What a new block holds: zeroes, or garbage the caller overwrites in full before anyone
  // reads it (a block read from disk, a WRITE covering the whole block).
  enum class Fill { Zero, Uninitialized };
  // Inserts a clean block (the key must not be cached). With `adopted` (a buffer from adopt(),
  // whose reference the block takes) the block's bytes are that buffer's and `fill` is ignored.
  CachedBlock* insert(uint64_t ino, uint64_t key, Fill fill = Fill::Zero,
                      BlockBuffer* adopted = nullptr);
  // A buffer for a block that is the page `page` of `run` (a call record's page lent by
  // util::LentPageRun), for insert() or CachedBlock::take_buffer(): zero-copy WRITE.
  BlockBuffer* adopt(uint8_t* page, util::PageRun* run) {
    adoptions_++;
    return pool_->adopt(page, run);
  }
  void mark_dirty(CachedBlock* b);
  void mark_clean(CachedBlock* b);
  void erase(CachedBlock* b);

  // Every cached block of `ino` with from <= key < to, in key order.
  std::vector<CachedBlock*> range(uint64_t ino, uint64_t from, uint64_t to);
  // Inodes that own dirty blocks.
  std::vector<uint64_t> dirty_inodes() const;
  size_t dirty_count() const { return dirty_.size(); }
  // Calls fn(ino, key) for every dirty block (Store's bound of what the next flush writes).
  template <class Fn>
  void for_each_dirty(Fn fn) const {
    for (const CachedBlock& b : dirty_) fn(b.ino, b.key);
  }
  // Blocks that went from clean to dirty so far: a bound taken from the dirty set at one moment
  // stays a bound when it adds what has been dirtied since.
  uint64_t dirtied() const { return dirtied_; }
  size_t size() const { return count_; }
  uint64_t bytes() const { return count_ * kBlockSize; }
  uint64_t budget() const { return budget_; }

  // Evicts clean blocks, oldest first, until the cache fits its budget.
  void trim();

  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  uint64_t adoptions() const { return adoptions_; }  // pages adopted, ever
  const BlockPool& pool() const { return *pool_; }
  // For pins that may outlive the cache (BlockPool::unref after the volume closed).
  const std::shared_ptr<BlockPool>& shared_pool() const { return pool_; }
  void count_miss() { misses_++; }

 private:
  static constexpr uint32_t kExtentShift = 6;  // 64 blocks per extent
  static constexpr uint32_t kExtentBlocks = 1u << kExtentShift;
  struct Extent {
    std::array<std::unique_ptr<CachedBlock>, kExtentBlocks> slot;
    uint32_t used = 0;
  };
  using Extents = std::map<uint64_t, Extent>;  // extent number (key >> kExtentShift) -> extent
  // The extent a key falls in; nullptr when absent and !create. Remembers what it found.
  Extent* extent_of(uint64_t ino, uint64_t key, bool create);
  // Unlinks and destroys `b` (already off the LRU/dirty lists).
  void remove(CachedBlock* b);
  void forget_remembered() { memo_[0] = memo_[1] = Memo{}; }

  using List = boost::intrusive::list<CachedBlock>;
  uint64_t budget_;
  // Declared before inodes_: outlives every block that holds one of its buffers; shared with
  // the pins of READ replies still being sent.
  std::shared_ptr<BlockPool> pool_;
  std::unordered_map<uint64_t, Extents> inodes_;  // node-based: Extents stay put on rehash
  size_t count_ = 0;
  // The last extent used for data keys [0] and for block-map node keys [1].
  struct Memo {
    uint64_t ino = 0, extent = 0;
    Extent* e = nullptr;
  };
  Memo memo_[2];
  List lru_;    // clean blocks, least recently used first
  List dirty_;  // dirty blocks, in no particular order
  uint64_t dirtied_ = 0;
  uint64_t hits_ = 0, misses_ = 0, adoptions_ = 0;
  std::mutex touch_mu_;  // find_shared()'s LRU moves (exclusive callers need no lock)
};

}  // namespace nasd::fs::lfs
