#include "fs/lfs/block_map.h"

namespace nasd::fs::lfs {

uint64_t tree_base(uint32_t t) {
  uint64_t base = kDirectPointers;
  for (uint32_t j = 0; j < t; j++) base += node_span(j + 1);
  return base;
}

uint64_t max_file_blocks() { return tree_base(kTreeCount); }

bool locate(uint64_t lblk, BlockPath* path) {
  if (lblk < kDirectPointers) {
    *path = BlockPath{true, uint32_t(lblk), 0, 0};
    return true;
  }
  for (uint32_t t = 0; t < kTreeCount; t++) {
    uint64_t base = tree_base(t);
    if (lblk < base + node_span(tree_height(t))) {
      *path = BlockPath{false, 0, t, lblk - base};
      return true;
    }
  }
  return false;
}

bool valid_node(const NodeId& n) {
  if (n.tree >= kTreeCount || n.level < 1 || n.level > tree_height(n.tree)) return false;
  uint64_t nodes_at_level = node_span(tree_height(n.tree) - n.level);
  return n.index < nodes_at_level;
}

}  // namespace nasd::fs::lfs
