// Cache of file blocks (data and block-map nodes) keyed by (inode, key) rather than by disk
// address, because in a log-structured volume a block gets a new address on every write.
// Dirty blocks are pinned until a flush writes them; clean ones sit on an LRU list (Boost.Intrusive)
// and are evicted when the cache exceeds its byte budget. Block buffers come from a BlockPool
// (block_pool.h) and go back to it on eviction, so a steady stream of writes reuses warm memory
// instead of faulting fresh pages in.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <boost/intrusive/list.hpp>

#include "fs/lfs/block_pool.h"
#include "fs/lfs/layout.h"

namespace nasd::fs::lfs {

struct CachedBlock : public boost::intrusive::list_base_hook<> {
  // `data` comes from `pool` and goes back to it when the block is destroyed.
  CachedBlock(uint64_t i, uint64_t k, BlockPool* pool);
  ~CachedBlock();
  CachedBlock(const CachedBlock&) = delete;
  CachedBlock& operator=(const CachedBlock&) = delete;

  uint64_t ino;
  uint64_t key;             // file block number, or a block-map node key
  uint64_t addr = kNoAddr;  // where the on-disk copy lives (the pointer in the block map)
  bool dirty = false;
  bool fresh = false;       // dirty and not yet on disk: counted as a pending allocation
  uint8_t* data;            // kBlockSize bytes, block aligned (O_DIRECT friendly)

 private:
  BlockPool* pool_;
};

class BlockCache {
 public:
  explicit BlockCache(uint64_t budget_bytes) : budget_(budget_bytes), pool_(kBlockSize) {}
  ~BlockCache();

  // nullptr on a miss. A hit moves a clean block to the MRU end.
  CachedBlock* find(uint64_t ino, uint64_t key);
  // find() for readers that run at once with each other while nobody changes the cache (the
  // volume's shared lock): the map is only read, and the MRU move and hit count take touch_mu_.
  CachedBlock* find_shared(uint64_t ino, uint64_t key);
  // What a new block holds: zeroes, or garbage the caller overwrites in full before anyone
  // reads it (a block read from disk, a WRITE covering the whole block).
  enum class Fill { Zero, Uninitialized };
  // Inserts a clean block (the key must not be cached).
  CachedBlock* insert(uint64_t ino, uint64_t key, Fill fill = Fill::Zero);
  void mark_dirty(CachedBlock* b);
  void mark_clean(CachedBlock* b);
  void erase(CachedBlock* b);

  // Every cached block of `ino` with from <= key < to, in key order.
  std::vector<CachedBlock*> range(uint64_t ino, uint64_t from, uint64_t to);
  // Inodes that own dirty blocks.
  std::vector<uint64_t> dirty_inodes() const;
  size_t dirty_count() const { return dirty_.size(); }
  size_t size() const { return map_.size(); }
  uint64_t bytes() const { return map_.size() * kBlockSize; }
  uint64_t budget() const { return budget_; }

  // Evicts clean blocks, oldest first, until the cache fits its budget.
  void trim();

  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  const BlockPool& pool() const { return pool_; }
  void count_miss() { misses_++; }

 private:
  using List = boost::intrusive::list<CachedBlock>;
  using Key = std::pair<uint64_t, uint64_t>;
  uint64_t budget_;
  BlockPool pool_;  // declared before map_: outlives every block that holds one of its buffers
  std::map<Key, std::unique_ptr<CachedBlock>> map_;
  List lru_;    // clean blocks, least recently used first
  List dirty_;  // dirty blocks, in no particular order
  uint64_t hits_ = 0, misses_ = 0;
  std::mutex touch_mu_;  // find_shared()'s LRU moves (exclusive callers need no lock)
};

}  // namespace nasd::fs::lfs
