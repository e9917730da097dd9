#include "fs/lfs/inode_cache.h"

namespace nasd::fs::lfs {

InodeCache::~InodeCache() {
  lru_.clear();
  dirty_.clear();
}

CachedInode* InodeCache::find(uint64_t ino) {
  auto it = map_.find(ino);
  if (it == map_.end()) return nullptr;
  CachedInode* c = it->second.get();
  hits_++;
  if (!c->dirty) {
    lru_.erase(lru_.iterator_to(*c));
    lru_.push_back(*c);
  }
  return c;
}

CachedInode* InodeCache::find_shared(uint64_t ino) {
  const auto& map = map_;
  auto it = map.find(ino);
  if (it == map.end()) return nullptr;
  CachedInode* c = it->second.get();
  // The MRU move is a hint for eviction: when another reader holds the lock (two event loops
  // listing a large directory touch an inode per entry), this hit is neither moved nor counted
  // rather than making the reader wait or sleep on the lock.
  std::unique_lock<std::mutex> g(touch_mu_, std::try_to_lock);
  if (!g.owns_lock()) return c;
  hits_++;
  if (!c->dirty) {
    lru_.erase(lru_.iterator_to(*c));
    lru_.push_back(*c);
  }
  return c;
}

CachedInode* InodeCache::insert(const Inode& in) {
  auto owned = std::make_unique<CachedInode>();
  owned->inode = in;
  CachedInode* c = owned.get();
  map_[in.ino] = std::move(owned);
  lru_.push_back(*c);
  return c;
}

void InodeCache::mark_dirty(CachedInode* c) {
  if (c->dirty) return;
  lru_.erase(lru_.iterator_to(*c));
  c->dirty = true;
  dirty_.push_back(*c);
}

void InodeCache::mark_clean(CachedInode* c) {
  if (!c->dirty) return;
  dirty_.erase(dirty_.iterator_to(*c));
  c->dirty = false;
  lru_.push_back(*c);
}

void InodeCache::erase(uint64_t ino) {
  auto it = map_.find(ino);
  if (it == map_.end()) return;
  CachedInode* c = it->second.get();
  if (c->dirty) dirty_.erase(dirty_.iterator_to(*c));
  else lru_.erase(lru_.iterator_to(*c));
  map_.erase(it);
}

std::vector<CachedInode*> InodeCache::dirty() const {
  std::vector<CachedInode*> out;
  for (const CachedInode& c : dirty_) out.push_back(const_cast<CachedInode*>(&c));
  return out;
}

void InodeCache::trim() {
  while (bytes() > budget_ && !lru_.empty()) {
    CachedInode& c = lru_.front();
    lru_.pop_front();
    map_.erase(c.inode.ino);
  }
}

}  // namespace nasd::fs::lfs
