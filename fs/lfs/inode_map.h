// The inode map: inode number -> where its newest copy lives, its generation and whether it is
// in use. Kept whole in memory; written to the log as imap blocks (256 entries each) at
// checkpoints, whose addresses the checkpoint records. Also hands out inode numbers.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "fs/lfs/layout.h"

namespace nasd::fs::lfs {

constexpr uint32_t kImapEntriesPerBlock = 256;

struct ImapEntry {
  uint64_t addr = kNoAddr;  // inode block; kNoAddr while the inode was never written
  uint16_t slot = 0;
  bool live = false;
  uint32_t gen = 0;  // generation of the current (or last) user of this number
};

class InodeMap {
 public:
  explicit InodeMap(uint64_t max_inodes) : max_inodes_(max_inodes) {}

  uint64_t max_inodes() const { return max_inodes_; }
  uint64_t next_ino() const { return entries_.size(); }  // one past the highest number used
  uint64_t live_count() const { return live_count_; }

  // nullptr for numbers never used.
  const ImapEntry* find(uint64_t ino) const {
    return ino < entries_.size() ? &entries_[ino] : nullptr;
  }
  void set(uint64_t ino, const ImapEntry& e);

  // Picks the lowest free number and the next generation for it; 0 when the map is full.
  uint64_t allocate(uint32_t* gen);
  // Allocates exactly `ino`/`gen` (journal replay); false when it is in use or out of range.
  bool claim(uint64_t ino, uint32_t gen);
  void release(uint64_t ino);

  // Block-level persistence.
  uint32_t block_count() const;
  uint64_t block_addr(uint32_t b) const { return b < addrs_.size() ? addrs_[b] : kNoAddr; }
  void set_block_addr(uint32_t b, uint64_t addr);
  const std::vector<uint64_t>& block_addrs() const { return addrs_; }
  void encode_block(uint32_t b, uint8_t* block) const;
  void load_block(uint32_t b, const uint8_t* block);
  // After all blocks are loaded: rebuild the free list and counters.
  void finish_load(uint64_t next_ino);
  const std::set<uint32_t>& dirty_blocks() const { return dirty_; }
  void clear_dirty() { dirty_.clear(); }
  void mark_dirty(uint32_t b) { dirty_.insert(b); }

 private:
  void grow(uint64_t n);

  uint64_t max_inodes_;
  std::vector<ImapEntry> entries_;  // index = inode number; 0 is never used
  std::vector<uint64_t> addrs_;
  std::set<uint64_t> free_;
  std::set<uint32_t> dirty_;
  uint64_t live_count_ = 0;
};

}  // namespace nasd::fs::lfs
