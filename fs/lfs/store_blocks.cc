// Store: file blocks through the cache and the block map (lookup, modify, truncate, walk).
#include <cstring>

#include "fs/lfs/endian.h"
#include "fs/lfs/store.h"

namespace nasd::fs::lfs {

namespace {
uint64_t ptr_at(const CachedBlock* node, uint32_t slot) { return get64(node->data + slot * 8); }
// A group in flight may be writing the node from this buffer: change a copy (unshare).
void set_ptr_at(CachedBlock* node, uint32_t slot, uint64_t v) {
  node->unshare(true);
  put64(node->data + slot * 8, v);
}
}  // namespace

// Finds a block-map node in the cache or on disk; with `create`, a missing one is made (dirty,
// zero-filled, no address yet). *out is nullptr when the node does not exist and !create.
Status Store::get_node(CachedInode* c, const NodeId& id, bool create, CachedBlock** out) {
  uint64_t ino = c->inode.ino;
  uint64_t key = node_key(id);
  if (CachedBlock* b = cached_block(ino, key)) {
    *out = b;
    return Status::Ok;
  }
  uint64_t addr;
  if (is_root(id)) {
    addr = c->inode.tree[id.tree];
  } else {
    CachedBlock* parent;
    Status st = get_node(c, parent_of(id), create, &parent);
    if (st != Status::Ok) return st;
    if (!parent) {
      *out = nullptr;
      return Status::Ok;
    }
    addr = ptr_at(parent, slot_in_parent(id));
  }
  if (addr == kNoAddr) {
    if (!create) {
      *out = nullptr;
      return Status::Ok;
    }
    if (CacheOnlyReads::active()) return CacheOnlyReads::refuse();
    CachedBlock* b = bcache_.insert(ino, key);
    bcache_.mark_dirty(b);
    icache_.mark_dirty(c);
    *out = b;
    return Status::Ok;
  }
  if (sb_.segment_of(addr) >= sb_.nsegments) return Status::Io;  // corrupt pointer
  if (CacheOnlyReads::active()) return CacheOnlyReads::refuse();
  bcache_.count_miss();
  CachedBlock* b = bcache_.insert(ino, key, BlockCache::Fill::Uninitialized);
  if (!dev_->read(addr, 1, b->data)) {
    bcache_.erase(b);
    return Status::Io;
  }
  b->addr = addr;
  *out = b;
  return Status::Ok;
}

Status Store::lookup_addr(CachedInode* c, uint64_t lblk, uint64_t* addr) {
  BlockPath p;
  if (!locate(lblk, &p)) return Status::FBig;
  if (p.direct) {
    *addr = c->inode.direct[p.slot];
    return Status::Ok;
  }
  CachedBlock* leaf;
  Status st = get_node(c, node_covering(p.tree, 1, p.rel), false, &leaf);
  if (st != Status::Ok) return st;
  *addr = leaf ? ptr_at(leaf, slot_for(1, p.rel)) : kNoAddr;
  return Status::Ok;
}

Status Store::set_pointer(CachedInode* c, uint64_t lblk, uint64_t addr, uint64_t* old) {
  BlockPath p;
  if (!locate(lblk, &p)) return Status::FBig;
  if (p.direct) {
    *old = c->inode.direct[p.slot];
    c->inode.direct[p.slot] = addr;
    return Status::Ok;
  }
  CachedBlock* leaf;
  Status st = get_node(c, node_covering(p.tree, 1, p.rel), true, &leaf);
  if (st != Status::Ok) return st;
  uint32_t slot = slot_for(1, p.rel);
  *old = ptr_at(leaf, slot);
  set_ptr_at(leaf, slot, addr);
  bcache_.mark_dirty(leaf);
  return Status::Ok;
}

Status Store::read_block(CachedInode* c, uint64_t lblk, const uint8_t** data, BlockBuffer** pin) {
  if (pin) *pin = nullptr;
  if (CachedBlock* b = cached_block(c->inode.ino, lblk)) {
    *data = b->data;
    if (pin) *pin = b->pin();
    return Status::Ok;
  }
  uint64_t addr;
  Status st = lookup_addr(c, lblk, &addr);
  if (st == Status::FBig) {
    *data = nullptr;
    return Status::Ok;
  }
  if (st != Status::Ok) return st;
  if (addr == kNoAddr) {
    *data = nullptr;
    return Status::Ok;
  }
  if (CacheOnlyReads::active()) return CacheOnlyReads::refuse();
  bcache_.count_miss();
  CachedBlock* b = bcache_.insert(c->inode.ino, lblk, BlockCache::Fill::Uninitialized);
  if (!dev_->read(addr, 1, b->data)) {
    bcache_.erase(b);
    return Status::Io;
  }
  b->addr = addr;
  *data = b->data;
  if (pin) *pin = b->pin();
  return Status::Ok;
}

Status Store::prefetch(CachedInode* c, uint64_t first, uint64_t count) {
  std::vector<BlockDevice::Read> reads;
  std::vector<CachedBlock*> fresh;
  for (uint64_t lblk = first; lblk < first + count; lblk++) {
    if (cached_block(c->inode.ino, lblk)) continue;
    uint64_t addr;
    Status st = lookup_addr(c, lblk, &addr);
    if (st == Status::FBig) break;
    if (st != Status::Ok) return st;
    if (addr == kNoAddr) continue;
    if (sb_.segment_of(addr) >= sb_.nsegments) return Status::Io;
    if (CacheOnlyReads::active()) return CacheOnlyReads::refuse();
    CachedBlock* b = bcache_.insert(c->inode.ino, lblk, BlockCache::Fill::Uninitialized);
    b->addr = addr;
    fresh.push_back(b);
    reads.push_back({addr, b->data});
  }
  if (reads.empty()) return Status::Ok;
  for (size_t i = 0; i < fresh.size(); i++) bcache_.count_miss();
  if (!dev_->read(reads)) {
    for (CachedBlock* b : fresh) bcache_.erase(b);
    return Status::Io;
  }
  return Status::Ok;
}

Status Store::modify_block(CachedInode* c, uint64_t lblk, bool overwrite_all, uint8_t** data) {
  return change_block(c, lblk, overwrite_all, nullptr, nullptr, data);
}

Status Store::adopt_block(CachedInode* c, uint64_t lblk, uint8_t* page, util::PageRun* run) {
  uint8_t* data;
  return change_block(c, lblk, true, page, run, &data);
}

Status Store::change_block(CachedInode* c, uint64_t lblk, bool overwrite_all, uint8_t* page,
                           util::PageRun* run, uint8_t** data) {
  if (failed_) return Status::Io;
  CachedBlock* b = bcache_.find(c->inode.ino, lblk);
  if (b && page) {
    // The old buffer goes; a READ reply or a flush still holding it keeps the old bytes.
    b->take_buffer(bcache_.adopt(page, run));
  } else if (b) {
    // A READ reply still being sent may be reading this buffer: write a copy instead.
    b->unshare(!overwrite_all);
  } else {
    uint64_t addr;
    Status st = lookup_addr(c, lblk, &addr);
    if (st != Status::Ok) return st;
    // A block the caller overwrites in full needs neither zeroes nor its old contents.
    const bool from_disk = addr != kNoAddr && !overwrite_all;
    if (from_disk && CacheOnlyReads::active()) return CacheOnlyReads::refuse();
    b = bcache_.insert(c->inode.ino, lblk,
                       overwrite_all || from_disk ? BlockCache::Fill::Uninitialized
                                                  : BlockCache::Fill::Zero,
                       page ? bcache_.adopt(page, run) : nullptr);
    b->addr = addr;
    if (addr == kNoAddr) {
      b->fresh = true;
      c->pending_blocks++;
      pending_blocks_++;
    } else if (!overwrite_all) {
      bcache_.count_miss();
      if (!dev_->read(addr, 1, b->data)) {
        bcache_.erase(b);
        return Status::Io;
      }
    }
  }
  bcache_.mark_dirty(b);
  icache_.mark_dirty(c);
  *data = b->data;
  return Status::Ok;
}

Status Store::is_allocated(CachedInode* c, uint64_t lblk, bool* allocated) {
  if (bcache_.find(c->inode.ino, lblk)) {
    *allocated = true;
    return Status::Ok;
  }
  uint64_t addr;
  Status st = lookup_addr(c, lblk, &addr);
  *allocated = st == Status::Ok && addr != kNoAddr;
  return st == Status::FBig ? Status::Ok : st;
}

void Store::drop_block_addr(CachedInode* c, uint64_t addr) {
  if (addr == kNoAddr) return;
  sut_.sub_live(addr, kBlockSize);
  if (c->inode.blocks > 0) c->inode.blocks--;
}

// Frees everything under node `id` for data blocks at relative index >= from_rel. Sets
// *now_empty when nothing is left under the node (the node itself is then freed too).
Status Store::free_subtree(CachedInode* c, const NodeId& id, uint64_t from_rel, bool* now_empty) {
  CachedBlock* node;
  Status st = get_node(c, id, false, &node);
  if (st != Status::Ok) return st;
  *now_empty = true;
  if (!node) return Status::Ok;
  uint64_t first = node_first_rel(id);
  uint64_t child_span = node_span(id.level - 1);
  bool changed = false, remaining = false;
  for (uint32_t s = 0; s < kPtrsPerNode; s++) {
    uint64_t child_first = first + s * child_span;
    uint64_t p = ptr_at(node, s);
    NodeId child{id.tree, id.level - 1, id.index * kPtrsPerNode + s};
    bool child_cached = id.level > 1 && bcache_.find(c->inode.ino, node_key(child));
    if (child_first + child_span <= from_rel) {  // kept whole
      if (p != kNoAddr || child_cached) remaining = true;
      continue;
    }
    if (id.level == 1) {
      if (p != kNoAddr) {
        drop_block_addr(c, p);
        set_ptr_at(node, s, kNoAddr);
        changed = true;
      }
      continue;
    }
    if (p == kNoAddr && !child_cached) continue;
    bool child_empty;
    st = free_subtree(c, child, from_rel, &child_empty);
    if (st != Status::Ok) return st;
    if (!child_empty) {
      remaining = true;
    } else if (p != kNoAddr) {
      set_ptr_at(node, s, kNoAddr);
      changed = true;
    }
  }
  if (!remaining) {
    drop_block_addr(c, node->addr);
    bcache_.erase(node);
    return Status::Ok;
  }
  *now_empty = false;
  if (changed) {
    bcache_.mark_dirty(node);
    icache_.mark_dirty(c);
  }
  return Status::Ok;
}

Status Store::truncate(CachedInode* c, uint64_t new_size) {
  if (failed_) return Status::Io;
  Inode& in = c->inode;
  uint64_t keep = (new_size + kBlockSize - 1) / kBlockSize;  // blocks that survive
  if (new_size % kBlockSize != 0 && new_size < in.size) {
    bool alloc;
    Status st = is_allocated(c, new_size / kBlockSize, &alloc);
    if (st != Status::Ok) return st;
    if (alloc) {
      uint8_t* d;
      st = modify_block(c, new_size / kBlockSize, false, &d);
      if (st != Status::Ok) return st;
      size_t from = new_size % kBlockSize;
      std::memset(d + from, 0, kBlockSize - from);
    }
  }
  for (CachedBlock* b : bcache_.range(in.ino, keep, kNodeKeyBit)) {
    if (b->fresh) {
      c->pending_blocks--;
      pending_blocks_--;
    }
    bcache_.erase(b);
  }
  for (uint32_t i = uint32_t(std::min<uint64_t>(keep, kDirectPointers)); i < kDirectPointers; i++) {
    if (in.direct[i] != kNoAddr) {
      drop_block_addr(c, in.direct[i]);
      in.direct[i] = kNoAddr;
    }
  }
  for (uint32_t t = 0; t < kTreeCount; t++) {
    uint64_t base = tree_base(t);
    uint64_t span = node_span(tree_height(t));
    if (keep >= base + span) continue;
    uint64_t from_rel = keep > base ? keep - base : 0;
    NodeId root{t, tree_height(t), 0};
    bool empty;
    Status st = free_subtree(c, root, from_rel, &empty);
    if (st != Status::Ok) return st;
    if (empty) in.tree[t] = kNoAddr;
  }
  icache_.mark_dirty(c);
  return Status::Ok;
}

Status Store::walk_node(CachedInode* c, const NodeId& id,
                        const std::function<void(uint64_t, RecordKind, uint64_t)>& fn) {
  CachedBlock* node;
  Status st = get_node(c, id, false, &node);
  if (st != Status::Ok || !node) return st;
  if (node->addr != kNoAddr) fn(node->addr, RecordKind::Node, node_key(id));
  // Copy the pointers: walking children may evict nothing, but keeps this independent of it.
  std::vector<uint64_t> ptrs(kPtrsPerNode);
  for (uint32_t s = 0; s < kPtrsPerNode; s++) ptrs[s] = ptr_at(node, s);
  uint64_t first = node_first_rel(id);
  for (uint32_t s = 0; s < kPtrsPerNode; s++) {
    if (id.level == 1) {
      if (ptrs[s] != kNoAddr) fn(ptrs[s], RecordKind::Data, tree_base(id.tree) + first + s);
      continue;
    }
    NodeId child{id.tree, id.level - 1, id.index * kPtrsPerNode + s};
    if (ptrs[s] == kNoAddr && !bcache_.find(c->inode.ino, node_key(child))) continue;
    st = walk_node(c, child, fn);
    if (st != Status::Ok) return st;
  }
  return Status::Ok;
}

Status Store::for_each_block(CachedInode* c,
                             const std::function<void(uint64_t, RecordKind, uint64_t)>& fn) {
  for (uint32_t i = 0; i < kDirectPointers; i++)
    if (c->inode.direct[i] != kNoAddr) fn(c->inode.direct[i], RecordKind::Data, i);
  for (uint32_t t = 0; t < kTreeCount; t++) {
    if (c->inode.tree[t] == kNoAddr && !bcache_.find(c->inode.ino, node_key(NodeId{t, tree_height(t), 0})))
      continue;
    Status st = walk_node(c, NodeId{t, tree_height(t), 0}, fn);
    if (st != Status::Ok) return st;
  }
  return Status::Ok;
}

}  // namespace nasd::fs::lfs
