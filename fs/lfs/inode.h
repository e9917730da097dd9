// The on-disk inode: every NFSv3 attribute plus the root of the block map. Inodes are packed
// 16 to a block; the inode map says which block and slot holds the current copy.
#pragma once

#include <cstdint>

#include "fs/lfs/layout.h"
#include "fs/volume.h"

namespace nasd::fs::lfs {

constexpr size_t kInodeBytes = 256;
constexpr size_t kInodesPerBlock = kBlockSize / kInodeBytes;
constexpr int kDirectPointers = 12;
constexpr int kTreeCount = 4;  // radix trees of height 1..4 after the direct pointers

struct Inode {
  uint64_t ino = 0;
  uint32_t gen = 0;
  FileType type = FileType::Reg;
  uint32_t mode = 0;
  uint32_t nlink = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t size = 0;
  uint64_t blocks = 0;  // allocated blocks (data + block-map nodes) on disk
  uint32_t rdev_major = 0;
  uint32_t rdev_minor = 0;
  Time atime, mtime, ctime;
  bool has_verifier = false;  // exclusive CREATE verifier present
  uint64_t verifier = 0;
  uint64_t parent = 0;       // directories: inode number of ".."
  uint64_t dir_entries = 0;  // directories: entries excluding "." and ".."
  uint64_t direct[kDirectPointers] = {};
  uint64_t tree[kTreeCount] = {};
};

// Writes one 256-byte slot.
void encode_inode(const Inode& in, uint8_t* slot);
// False when the slot is empty or malformed.
bool decode_inode(const uint8_t* slot, Inode* in);

}  // namespace nasd::fs::lfs
