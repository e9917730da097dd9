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
  free_.reserve(free_.size() + blocks_per_slab_);
  // Pushed in reverse so the slab is handed out front to back.
  for (size_t i = blocks_per_slab_; i-- > 0;) free_.push_back(slab + i * block_size_);
}

uint8_t* BlockPool::acquire() {
  if (free_.empty()) grow();
  uint8_t* b = free_.back();
  free_.pop_back();
  in_use_++;
  return b;
}

bool BlockPool::owns(const uint8_t* p) const {
  for (const auto& s : slabs_) {
    const uint8_t* base = s.get();
    if (p >= base && p < base + block_size_ * blocks_per_slab_)
      return (static_cast<size_t>(p - base) % block_size_) == 0;
  }
  return false;
}

void BlockPool::release(uint8_t* block) {
  if (!block) return;
  assert(owns(block));
  assert(in_use_ > 0);
  assert(std::find(free_.begin(), free_.end(), block) == free_.end());
  in_use_--;
  free_.push_back(block);
}

}  // namespace nasd::fs::lfs
