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
// Buffers are reference counted (BlockBuffer::refs) so that a READ reply can be sent straight
// from cache blocks (util/byte_slices.h): the cache holds one reference to the buffer of each
// block it caches, a reply being sent holds one more (a pin) until the send completes. A buffer
// goes back to the free list when its last reference goes, which for an evicted or overwritten
// block may be on a network thread long after the cache let go of it; the cache never writes a
// buffer someone else also holds (CachedBlock::unshare).
//
// Invariants: a buffer with refs > 0 is not on the free list and one with refs == 0 is, never
// both; releasing a buffer the pool did not hand out, or twice, is a bug and is caught in debug
// builds. Thread-safe (one mutex around the free list), so references may be dropped on any
// thread; the pool itself must outlive every reference (hold it by shared_ptr). Buffers are
// returned uninitialised; the caller zeroes them when it needs to.
//
// Adopted pages (zero-copy WRITE, util/page_run.h): a buffer may also describe one page of a
// call record's util::PageRun, which the cache then keeps as a block's buffer instead of a copy
// of it. Such a buffer holds one reference to its run; its last unref() drops that reference
// (the run goes back to its own pool when nobody else holds it) and keeps the descriptor for
// the next adoption, so adopting allocates nothing in the steady state.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "util/page_run.h"

namespace nasd::fs::lfs {

// One buffer of a pool and its reference count; never moves while the pool lives.
struct BlockBuffer {
  uint8_t* data = nullptr;
  std::atomic<uint32_t> refs{0};
  util::PageRun* run = nullptr;  // set for an adopted page: the run `data` lies in
};

class BlockPool {
 public:
  // Each slab holds `blocks_per_slab` buffers of `block_size` bytes (a power of two).
  explicit BlockPool(size_t block_size, size_t blocks_per_slab = 64);
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // A buffer of block_size() bytes aligned to block_size(), holding one reference;
  // throws std::bad_alloc.
  BlockBuffer* acquire_buffer();
  // A buffer describing the page at `page` of `run` (run->holds_page(page)), holding one
  // reference; it holds one reference to the run until its last unref(). Throws std::bad_alloc.
  BlockBuffer* adopt(uint8_t* page, util::PageRun* run);
  // One more reference to a buffer the caller already holds one to.
  static void ref(BlockBuffer* b) { b->refs.fetch_add(1, std::memory_order_relaxed); }
  // Drops one reference; the last one gives the buffer back (its contents are garbage then).
  void unref(BlockBuffer* b);

  // The same for callers that only deal in bytes: acquire_buffer()->data, and unref() of the
  // buffer that `block` is the data of.
  uint8_t* acquire();
  void release(uint8_t* block);

  size_t block_size() const { return block_size_; }
  size_t in_use() const;
  size_t free_count() const;
  size_t slabs() const;

 private:
  struct FreeSlab {
    void operator()(uint8_t* p) const;
  };
  void grow();  // mu_ held
  BlockBuffer* find(const uint8_t* p);  // mu_ held; nullptr when not one of ours

  size_t block_size_;
  size_t blocks_per_slab_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<uint8_t, FreeSlab>> slabs_;
  std::vector<std::unique_ptr<BlockBuffer[]>> buffers_;  // buffers_[i] describes slabs_[i]
  std::vector<BlockBuffer*> free_;  // LIFO: the warmest buffer is reused first
  size_t in_use_ = 0;
  // Descriptors for adopted pages: every one made (they never move) and the unused ones.
  std::vector<std::unique_ptr<BlockBuffer>> adoption_descs_;
  std::vector<BlockBuffer*> free_descs_;
};

// Pins taken for one reader (BlockPool::ref'd buffers), dropped together when it goes: the
// owner of the util::ByteSlices of a READ reply sent from cache blocks.
struct BlockPins {
  explicit BlockPins(std::shared_ptr<BlockPool> p) : pool(std::move(p)) {}
  ~BlockPins() {
    for (BlockBuffer* b : held) pool->unref(b);
  }
  BlockPins(const BlockPins&) = delete;
  BlockPins& operator=(const BlockPins&) = delete;

  std::shared_ptr<BlockPool> pool;
  // In place for a READ of up to 8 blocks: no allocation besides the pins object itself.
  boost::container::small_vector<BlockBuffer*, 8> held;
};

}  // namespace nasd::fs::lfs
