// Decoded inodes in memory. Dirty inodes are pinned until a flush writes them; clean ones are
// kept on an LRU list (Boost.Intrusive) and dropped when the cache exceeds its budget.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <boost/intrusive/list.hpp>

#include "fs/lfs/inode.h"

namespace nasd::fs::lfs {

struct CachedInode : public boost::intrusive::list_base_hook<> {
  Inode inode;
  bool dirty = false;
  uint64_t pending_blocks = 0;  // dirty data blocks without a disk address yet (for `used`)
};

class InodeCache {
 public:
  explicit InodeCache(uint64_t budget_bytes) : budget_(budget_bytes) {}
  ~InodeCache();

  CachedInode* find(uint64_t ino);
  // find() for readers that run at once with each other while nobody changes the cache (the
  // volume's shared lock): the map is only read, and the MRU move and hit count take touch_mu_
  // when it is free at once (both are skipped when another reader holds it).
  CachedInode* find_shared(uint64_t ino);
  CachedInode* insert(const Inode& in);  // clean; replaces nothing (must not be cached)
  void mark_dirty(CachedInode* c);
  void mark_clean(CachedInode* c);
  void erase(uint64_t ino);

  std::vector<CachedInode*> dirty() const;
  size_t dirty_count() const { return dirty_.size(); }
  size_t size() const { return map_.size(); }
  uint64_t bytes() const { return map_.size() * kEntryCost; }
  void trim();

  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  void count_miss() { misses_++; }

 private:
  static constexpr uint64_t kEntryCost = sizeof(CachedInode) + 64;  // plus hash-table overhead
  using List = boost::intrusive::list<CachedInode>;
  uint64_t budget_;
  std::unordered_map<uint64_t, std::unique_ptr<CachedInode>> map_;
  List lru_, dirty_;
  uint64_t hits_ = 0, misses_ = 0;
  std::mutex touch_mu_;  // find_shared()'s LRU moves (exclusive callers need no lock)
};

}  // namespace nasd::fs::lfs
