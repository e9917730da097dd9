#include "fs/lfs/inode_map.h"

#include <cstring>

#include "fs/lfs/endian.h"

namespace nasd::fs::lfs {

namespace {
constexpr size_t kEntryBytes = 16;
constexpr uint16_t kLiveFlag = 1;
}  // namespace

void InodeMap::grow(uint64_t n) {
  if (n <= entries_.size()) return;
  uint64_t old = entries_.size();
  entries_.resize(n);
  // Numbers skipped over (by claim) become free; 0 is reserved, the root is claimed at mkfs.
  for (uint64_t i = std::max<uint64_t>(old, kRootIno); i + 1 < n; i++) free_.insert(i);
  if (addrs_.size() < block_count()) addrs_.resize(block_count(), kNoAddr);
}

void InodeMap::set(uint64_t ino, const ImapEntry& e) {
  grow(ino + 1);
  ImapEntry& cur = entries_[ino];
  if (cur.live != e.live) {
    live_count_ += e.live ? 1 : -1;
    if (e.live) free_.erase(ino); else free_.insert(ino);
  }
  cur = e;
  dirty_.insert(uint32_t(ino / kImapEntriesPerBlock));
}

uint64_t InodeMap::allocate(uint32_t* gen) {
  uint64_t ino;
  if (!free_.empty()) {
    ino = *free_.begin();
  } else {
    ino = std::max<uint64_t>(entries_.size(), kRootIno + 1);
    if (ino >= max_inodes_) return 0;
  }
  uint32_t g = ino < entries_.size() ? entries_[ino].gen + 1 : 1;
  if (g == 0) g = 1;
  set(ino, ImapEntry{kNoAddr, 0, true, g});
  *gen = g;
  return ino;
}

bool InodeMap::claim(uint64_t ino, uint32_t gen) {
  if (ino == 0 || ino >= max_inodes_) return false;
  if (ino < entries_.size() && entries_[ino].live) return false;
  set(ino, ImapEntry{kNoAddr, 0, true, gen});
  return true;
}

void InodeMap::release(uint64_t ino) {
  if (ino >= entries_.size() || !entries_[ino].live) return;
  ImapEntry e = entries_[ino];
  e.live = false;
  e.addr = kNoAddr;
  e.slot = 0;
  set(ino, e);
}

uint32_t InodeMap::block_count() const {
  return uint32_t((entries_.size() + kImapEntriesPerBlock - 1) / kImapEntriesPerBlock);
}

void InodeMap::set_block_addr(uint32_t b, uint64_t addr) {
  if (addrs_.size() <= b) addrs_.resize(b + 1, kNoAddr);
  addrs_[b] = addr;
}

void InodeMap::encode_block(uint32_t b, uint8_t* block) const {
  std::memset(block, 0, kBlockSize);
  for (uint32_t i = 0; i < kImapEntriesPerBlock; i++) {
    uint64_t ino = uint64_t(b) * kImapEntriesPerBlock + i;
    if (ino >= entries_.size()) break;
    const ImapEntry& e = entries_[ino];
    Encoder enc(block + i * kEntryBytes);
    enc.u64(e.addr);
    enc.u32(e.gen);
    enc.u16(e.slot);
    enc.u16(e.live ? kLiveFlag : 0);
  }
}

void InodeMap::load_block(uint32_t b, const uint8_t* block) {
  uint64_t first = uint64_t(b) * kImapEntriesPerBlock;
  if (entries_.size() < first + kImapEntriesPerBlock) entries_.resize(first + kImapEntriesPerBlock);
  for (uint32_t i = 0; i < kImapEntriesPerBlock; i++) {
    Decoder d(block + i * kEntryBytes);
    ImapEntry& e = entries_[first + i];
    e.addr = d.u64();
    e.gen = d.u32();
    e.slot = d.u16();
    e.live = d.u16() & kLiveFlag;
  }
}

void InodeMap::finish_load(uint64_t next_ino) {
  entries_.resize(std::max<uint64_t>(next_ino, kRootIno + 1));
  free_.clear();
  live_count_ = 0;
  for (uint64_t i = kRootIno; i < entries_.size(); i++) {
    if (entries_[i].live) live_count_++;
    else free_.insert(i);
  }
  addrs_.resize(std::max<size_t>(addrs_.size(), block_count()), kNoAddr);
  dirty_.clear();
}

}  // namespace nasd::fs::lfs
