// A free list of 4 KiB, block-aligned buffers for the block cache, carved from large slabs.
//
// Why: a sequential 1 MiB WRITE inserts 256 fresh cache blocks and, once they are flushed and
// evicted, frees 256 others. With one aligned_alloc/free per block the allocator hands freed
// pages back to the kernel and the next insert faults them in again and zeroes them: the
// issue 12 profile showed ~40% of the server's CPU in BlockCache::insert and its page faults.
// The pool keeps every buffer it ever handed out (memory stays at the cache's high-water
// mark, which the cache budget bounds) and reuses the most recently freed one first, whose
// page is still mapped and likely still in the CPU cache.
//
// Invariants: a buffer is either handed out (owned by exactly one CachedBlock) or on the free
// list, never both; release() of a buffer the pool did not hand out, or twice, is a bug and
// is caught in debug builds. Not thread-safe: the cache that owns it is used under the
// store's lock. Buffers are returned uninitialised; the caller zeroes them when it needs to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace nasd::fs::lfs {

class BlockPool {
 public:
  // Each slab holds `blocks_per_slab` buffers of `block_size` bytes (a power of two).
  explicit BlockPool(size_t block_size, size_t blocks_per_slab = 64);
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // A buffer of block_size() bytes aligned to block_size(); throws std::bad_alloc.
  uint8_t* acquire();
  // Gives back a buffer from acquire(). Its contents are garbage from now on.
  void release(uint8_t* block);

  size_t block_size() const { return block_size_; }
  size_t in_use() const { return in_use_; }
  size_t free_count() const { return free_.size(); }
  size_t slabs() const { return slabs_.size(); }

 private:
  struct FreeSlab {
    void operator()(uint8_t* p) const;
  };
  void grow();
  bool owns(const uint8_t* p) const;

  size_t block_size_;
  size_t blocks_per_slab_;
  std::vector<std::unique_ptr<uint8_t, FreeSlab>> slabs_;
  std::vector<uint8_t*> free_;  // LIFO: the warmest buffer is reused first
  size_t in_use_ = 0;
};

}  // namespace nasd::fs::lfs
