// Geometry of a file's block map: 12 direct pointers, then four radix trees of height 1..4
// whose nodes hold 512 block addresses each. A file block number maps to either a direct slot
// or a (tree, leaf-relative index) pair; nodes are named by a key that sorts children (lower
// levels) before parents, which is the order a flush must write them in.
#pragma once

#include <cstdint>

#include "fs/lfs/inode.h"

namespace nasd::fs::lfs {

constexpr uint32_t kPtrsPerNode = kBlockSize / 8;
constexpr uint32_t kPtrShift = 9;  // log2(kPtrsPerNode)
constexpr uint64_t kNodeKeyBit = 1ull << 63;

struct NodeId {
  uint32_t tree = 0;   // 0..3; tree t has height t+1
  uint32_t level = 1;  // 1 = points at data blocks; height = root
  uint64_t index = 0;  // position among the nodes of this level of the tree
};

struct BlockPath {
  bool direct = false;
  uint32_t slot = 0;  // direct pointer index
  uint32_t tree = 0;
  uint64_t rel = 0;   // data block index relative to the tree's first block
};

// Number of file blocks the map can address; the largest file is that times 4 KiB.
uint64_t max_file_blocks();
// False when `lblk` is beyond max_file_blocks().
bool locate(uint64_t lblk, BlockPath* path);
// First file block covered by tree `t`.
uint64_t tree_base(uint32_t t);
inline uint32_t tree_height(uint32_t t) { return t + 1; }

inline NodeId node_covering(uint32_t tree, uint32_t level, uint64_t rel) {
  return NodeId{tree, level, rel >> (kPtrShift * level)};
}
// Pointer slot inside `node` (at its level) for the data block at `rel`.
inline uint32_t slot_for(uint32_t level, uint64_t rel) {
  return uint32_t((rel >> (kPtrShift * (level - 1))) & (kPtrsPerNode - 1));
}
inline bool is_root(const NodeId& n) { return n.level == tree_height(n.tree); }
inline NodeId parent_of(const NodeId& n) { return NodeId{n.tree, n.level + 1, n.index >> kPtrShift}; }
inline uint32_t slot_in_parent(const NodeId& n) { return uint32_t(n.index & (kPtrsPerNode - 1)); }
// First data block (relative to the tree) under `n`, and how many it covers.
inline uint64_t node_first_rel(const NodeId& n) { return n.index << (kPtrShift * n.level); }
inline uint64_t node_span(uint32_t level) { return 1ull << (kPtrShift * level); }

inline uint64_t node_key(const NodeId& n) {
  return kNodeKeyBit | (uint64_t(n.level) << 54) | (uint64_t(n.tree) << 50) | n.index;
}
inline bool is_node_key(uint64_t key) { return key & kNodeKeyBit; }
inline NodeId node_from_key(uint64_t key) {
  return NodeId{uint32_t((key >> 50) & 0xf), uint32_t((key >> 54) & 0xf),
                key & ((1ull << 50) - 1)};
}
// Structural validity of a key read from disk.
bool valid_node(const NodeId& n);

}  // namespace nasd::fs::lfs
