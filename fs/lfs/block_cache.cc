#include "fs/lfs/block_cache.h"

#include <cstring>
#include <set>

namespace nasd::fs::lfs {

CachedBlock::CachedBlock(uint64_t i, uint64_t k, BlockPool* pool)
    : ino(i), key(k), data(pool->acquire()), pool_(pool) {}

CachedBlock::~CachedBlock() { pool_->release(data); }

BlockCache::~BlockCache() {
  lru_.clear();
  dirty_.clear();
}

CachedBlock* BlockCache::find(uint64_t ino, uint64_t key) {
  auto it = map_.find({ino, key});
  if (it == map_.end()) return nullptr;
  CachedBlock* b = it->second.get();
  hits_++;
  if (!b->dirty) {
    lru_.erase(lru_.iterator_to(*b));
    lru_.push_back(*b);
  }
  return b;
}

CachedBlock* BlockCache::find_shared(uint64_t ino, uint64_t key) {
  const auto& map = map_;
  auto it = map.find({ino, key});
  if (it == map.end()) return nullptr;
  CachedBlock* b = it->second.get();
  std::lock_guard<std::mutex> g(touch_mu_);
  hits_++;
  if (!b->dirty) {
    lru_.erase(lru_.iterator_to(*b));
    lru_.push_back(*b);
  }
  return b;
}

CachedBlock* BlockCache::insert(uint64_t ino, uint64_t key, Fill fill) {
  auto owned = std::make_unique<CachedBlock>(ino, key, &pool_);
  if (fill == Fill::Zero) std::memset(owned->data, 0, kBlockSize);
  CachedBlock* b = owned.get();
  map_[{ino, key}] = std::move(owned);
  lru_.push_back(*b);
  return b;
}

void BlockCache::mark_dirty(CachedBlock* b) {
  if (b->dirty) return;
  lru_.erase(lru_.iterator_to(*b));
  b->dirty = true;
  dirty_.push_back(*b);
}

void BlockCache::mark_clean(CachedBlock* b) {
  if (!b->dirty) return;
  dirty_.erase(dirty_.iterator_to(*b));
  b->dirty = false;
  b->fresh = false;
  lru_.push_back(*b);
}

void BlockCache::erase(CachedBlock* b) {
  if (b->dirty) dirty_.erase(dirty_.iterator_to(*b));
  else lru_.erase(lru_.iterator_to(*b));
  map_.erase({b->ino, b->key});
}

std::vector<CachedBlock*> BlockCache::range(uint64_t ino, uint64_t from, uint64_t to) {
  std::vector<CachedBlock*> out;
  for (auto it = map_.lower_bound({ino, from}); it != map_.end(); ++it) {
    if (it->first.first != ino || it->first.second >= to) break;
    out.push_back(it->second.get());
  }
  return out;
}

std::vector<uint64_t> BlockCache::dirty_inodes() const {
  std::set<uint64_t> inos;
  for (const CachedBlock& b : dirty_) inos.insert(b.ino);
  return {inos.begin(), inos.end()};
}

void BlockCache::trim() {
  while (bytes() > budget_ && !lru_.empty()) {
    CachedBlock& b = lru_.front();
    lru_.pop_front();
    map_.erase({b.ino, b.key});
  }
}

}  // namespace nasd::fs::lfs
