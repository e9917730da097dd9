#include "fs/lfs/block_cache.h"

#include <cstring>
#include <set>

#include <boost/pool/singleton_pool.hpp>

namespace nasd::fs::lfs {

namespace {
struct CachedBlockPoolTag {};
// The pool never gives its memory back: it stays at the most blocks ever cached at once, which
// the cache's budget bounds.
using CachedBlockPool = boost::singleton_pool<CachedBlockPoolTag, sizeof(CachedBlock)>;
}  // namespace

void* CachedBlock::operator new(size_t size) {
  if (size != sizeof(CachedBlock)) return ::operator new(size);
  void* p = CachedBlockPool::malloc();
  if (!p) throw std::bad_alloc();
  return p;
}

void CachedBlock::operator delete(void* p, size_t size) {
  if (!p) return;
  if (size != sizeof(CachedBlock)) return ::operator delete(p);
  CachedBlockPool::free(p);
}

CachedBlock::CachedBlock(uint64_t i, uint64_t k, BlockPool* pool, BlockBuffer* adopted)
    : ino(i), key(k), pool_(pool), buf_(adopted ? adopted : pool->acquire_buffer()) {
  data = buf_->data;
}

CachedBlock::~CachedBlock() { pool_->unref(buf_); }

void CachedBlock::unshare(bool keep_contents) {
  if (buf_->refs.load(std::memory_order_acquire) <= 1) return;
  BlockBuffer* own = pool_->acquire_buffer();
  if (keep_contents) std::memcpy(own->data, buf_->data, kBlockSize);
  pool_->unref(buf_);
  buf_ = own;
  data = own->data;
}

void CachedBlock::take_buffer(BlockBuffer* adopted) {
  pool_->unref(buf_);
  buf_ = adopted;
  data = adopted->data;
}

BlockCache::~BlockCache() {
  lru_.clear();
  dirty_.clear();
  forget_remembered();
  inodes_.clear();
}

BlockCache::Extent* BlockCache::extent_of(uint64_t ino, uint64_t key, bool create) {
  const uint64_t ext = key >> kExtentShift;
  Memo& m = memo_[key >> 63];
  if (m.e && m.ino == ino && m.extent == ext) return m.e;
  auto in = inodes_.find(ino);
  if (in == inodes_.end()) {
    if (!create) return nullptr;
    in = inodes_.emplace(ino, Extents{}).first;
  }
  auto it = in->second.find(ext);
  if (it == in->second.end()) {
    if (!create) return nullptr;
    it = in->second.emplace(ext, Extent{}).first;
  }
  m = Memo{ino, ext, &it->second};
  return &it->second;
}

CachedBlock* BlockCache::find(uint64_t ino, uint64_t key) {
  Extent* e = extent_of(ino, key, false);
  if (!e) return nullptr;
  CachedBlock* b = e->slot[key & (kExtentBlocks - 1)].get();
  if (!b) return nullptr;
  hits_++;
  if (!b->dirty) {
    lru_.erase(lru_.iterator_to(*b));
    lru_.push_back(*b);
  }
  return b;
}

CachedBlock* BlockCache::find_shared(uint64_t ino, uint64_t key) {
  // Only reads the index: extent_of() would update memo_, which concurrent readers share.
  const auto in = inodes_.find(ino);
  if (in == inodes_.end()) return nullptr;
  const auto it = in->second.find(key >> kExtentShift);
  if (it == in->second.end()) return nullptr;
  CachedBlock* b = it->second.slot[key & (kExtentBlocks - 1)].get();
  if (!b) return nullptr;
  std::lock_guard<std::mutex> g(touch_mu_);
  hits_++;
  if (!b->dirty) {
    lru_.erase(lru_.iterator_to(*b));
    lru_.push_back(*b);
  }
  return b;
}

CachedBlock* BlockCache::insert(uint64_t ino, uint64_t key, Fill fill, BlockBuffer* adopted) {
  auto owned = std::make_unique<CachedBlock>(ino, key, pool_.get(), adopted);
  if (fill == Fill::Zero && !adopted) std::memset(owned->data, 0, kBlockSize);
  CachedBlock* b = owned.get();
  Extent* e = extent_of(ino, key, true);
  std::unique_ptr<CachedBlock>& s = e->slot[key & (kExtentBlocks - 1)];
  if (s) {  // replacing a cached key is a caller bug; keep the lists consistent anyway
    if (s->dirty) dirty_.erase(dirty_.iterator_to(*s));
    else lru_.erase(lru_.iterator_to(*s));
    count_--;
    e->used--;
  }
  s = std::move(owned);
  e->used++;
  count_++;
  lru_.push_back(*b);
  return b;
}

void BlockCache::mark_dirty(CachedBlock* b) {
  if (b->dirty) return;
  lru_.erase(lru_.iterator_to(*b));
  b->dirty = true;
  dirtied_++;
  dirty_.push_back(*b);
}

void BlockCache::mark_clean(CachedBlock* b) {
  if (!b->dirty) return;
  dirty_.erase(dirty_.iterator_to(*b));
  b->dirty = false;
  b->fresh = false;
  lru_.push_back(*b);
}

void BlockCache::remove(CachedBlock* b) {
  const uint64_t ino = b->ino, key = b->key, ext = key >> kExtentShift;
  auto in = inodes_.find(ino);
  if (in == inodes_.end()) return;
  auto it = in->second.find(ext);
  if (it == in->second.end()) return;
  Extent& e = it->second;
  std::unique_ptr<CachedBlock>& s = e.slot[key & (kExtentBlocks - 1)];
  if (s.get() != b) return;
  s.reset();
  count_--;
  if (--e.used > 0) return;
  for (Memo& m : memo_)
    if (m.e == &e) m = Memo{};
  in->second.erase(it);
  if (in->second.empty()) inodes_.erase(in);
}

void BlockCache::erase(CachedBlock* b) {
  if (b->dirty) dirty_.erase(dirty_.iterator_to(*b));
  else lru_.erase(lru_.iterator_to(*b));
  remove(b);
}

std::vector<CachedBlock*> BlockCache::range(uint64_t ino, uint64_t from, uint64_t to) {
  std::vector<CachedBlock*> out;
  if (from >= to) return out;
  auto in = inodes_.find(ino);
  if (in == inodes_.end()) return out;
  const Extents& exts = in->second;
  const uint64_t last_ext = (to - 1) >> kExtentShift;
  for (auto it = exts.lower_bound(from >> kExtentShift);
       it != exts.end() && it->first <= last_ext; ++it) {
    const uint64_t base = it->first << kExtentShift;
    for (uint32_t i = 0; i < kExtentBlocks; i++) {
      CachedBlock* b = it->second.slot[i].get();
      if (b && base + i >= from && base + i < to) out.push_back(b);
    }
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
    remove(&b);
  }
}

}  // namespace nasd::fs::lfs
