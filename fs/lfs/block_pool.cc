#include "fs/lfs/block_pool.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <new>

namespace nasd::fs::lfs {

void BlockPool::FreeSlab::operator()(uint8_t* p) const { std::free(p); }

BlockPool::BlockPool(size_t block_size, size_t blocks_per_slab)
    : block_size_(block_size), blocks_per_slab_(std::max<size_t>(1, blocks_per_slab)) {}

BlockPool::~BlockPool() = default;

void BlockPool::grow() {
  auto* slab = static_cast<uint8_t*>(std::aligned_alloc(block_size_, block_size_ * blocks_per_slab_));
  if (!slab) throw std::bad_alloc();
  slabs_.emplace_back(slab);
  auto descs = std::make_unique<BlockBuffer[]>(blocks_per_slab_);
  free_.reserve(free_.size() + blocks_per_slab_);
  // Pushed in reverse so the slab is handed out front to back.
  for (size_t i = blocks_per_slab_; i-- > 0;) {
    descs[i].data = slab + i * block_size_;
    free_.push_back(&descs[i]);
  }
  buffers_.push_back(std::move(descs));
}

BlockBuffer* BlockPool::acquire_buffer() {
  std::lock_guard<std::mutex> g(mu_);
  if (free_.empty()) grow();
  BlockBuffer* b = free_.back();
  free_.pop_back();
  in_use_++;
  b->refs.store(1, std::memory_order_relaxed);
  return b;
}

BlockBuffer* BlockPool::adopt(uint8_t* page, util::PageRun* run) {
  assert(run != nullptr && run->holds_page(page));
  BlockBuffer* b;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (free_descs_.empty()) {
      adoption_descs_.push_back(std::make_unique<BlockBuffer>());
      free_descs_.push_back(adoption_descs_.back().get());
    }
    b = free_descs_.back();
    free_descs_.pop_back();
  }
  run->ref_adopted();
  b->data = page;
  b->run = run;
  b->refs.store(1, std::memory_order_relaxed);
  return b;
}

void BlockPool::unref(BlockBuffer* b) {
  if (!b) return;
  // acq_rel: whoever drops the last reference sees every write made through the others.
  const uint32_t before = b->refs.fetch_sub(1, std::memory_order_acq_rel);
  assert(before > 0);
  if (before != 1) return;
  if (util::PageRun* run = b->run) {
    b->run = nullptr;
    b->data = nullptr;
    {
      std::lock_guard<std::mutex> g(mu_);
      free_descs_.push_back(b);
    }
    run->unref_adopted();
    return;
  }
  std::lock_guard<std::mutex> g(mu_);
  assert(in_use_ > 0);
  assert(std::find(free_.begin(), free_.end(), b) == free_.end());
  in_use_--;
  free_.push_back(b);
}

BlockBuffer* BlockPool::find(const uint8_t* p) {
  for (size_t s = 0; s < slabs_.size(); s++) {
    const uint8_t* base = slabs_[s].get();
    if (p >= base && p < base + block_size_ * blocks_per_slab_) {
      const size_t off = static_cast<size_t>(p - base);
      return off % block_size_ == 0 ? &buffers_[s][off / block_size_] : nullptr;
    }
  }
  return nullptr;
}

uint8_t* BlockPool::acquire() { return acquire_buffer()->data; }

void BlockPool::release(uint8_t* block) {
  if (!block) return;
  BlockBuffer* b;
  {
    std::lock_guard<std::mutex> g(mu_);
    b = find(block);
  }
  assert(b != nullptr);
  if (b) unref(b);
}

size_t BlockPool::in_use() const {
  std::lock_guard<std::mutex> g(mu_);
  return in_use_;
}

size_t BlockPool::free_count() const {
  std::lock_guard<std::mutex> g(mu_);
  return free_.size();
}

size_t BlockPool::slabs() const {
  std::lock_guard<std::mutex> g(mu_);
  return slabs_.size();
}

}  // namespace nasd::fs::lfs
