// Store: snapshots. A snapshot is the inode map of one checkpoint, kept; see snapshot_catalog.h
// for the design and fs/FORMAT.md for the blocks.
#include <bit>
#include <map>
#include <unordered_map>

#include "fs/lfs/snapshot_ids.h"
#include "fs/lfs/store.h"

namespace nasd::fs::lfs {

namespace {
// Cache of a snapshot store: enough for a directory walk and sequential reads; snapshot files
// are read far less than live ones.
constexpr uint64_t kSnapshotCacheBytes = 8ull << 20;
}  // namespace

bool Store::load_catalog(uint64_t addr, std::string* err) {
  alignas(kBlockSize) uint8_t blk[kBlockSize];
  if (sb_.segment_of(addr) >= sb_.nsegments || !dev_->read(addr, 1, blk) ||
      !decode_catalog(blk, &catalog_)) {
    *err = opts_.backing + ": the snapshot catalog (block " + std::to_string(addr) +
           ") is unreadable";
    return false;
  }
  catalog_addr_ = addr;  // the pins came with the checkpoint's usage table
  return true;
}

std::unique_ptr<Store> Store::open_snapshot(const SnapshotInfo& s, std::string* err) {
  LfsOptions o = opts_;
  o.read_only = true;
  o.background_threads = false;
  o.cache_bytes = kSnapshotCacheBytes;
  std::unique_ptr<Store> snap(new Store(dev_, sb_, o));
  snap->failed_ = true;  // refuses every write
  alignas(kBlockSize) uint8_t blk[kBlockSize];
  std::vector<uint64_t> addrs;
  uint64_t a = s.table;
  for (uint32_t steps = 0; a != kNoAddr; steps++) {
    uint32_t id;
    uint64_t next;
    if (steps > s.imap_blocks / kTableAddrsPerBlock + 1 || sb_.segment_of(a) >= sb_.nsegments ||
        !dev_->read(a, 1, blk) || !decode_table_block(blk, &id, &addrs, &next) || id != s.id) {
      *err = "snapshot " + s.name + ": table block " + std::to_string(a) + " is unreadable";
      return nullptr;
    }
    snap->snapshot_tables_.push_back(a);
    a = next;
  }
  if (addrs.size() != s.imap_blocks || s.next_ino > sb_.max_inodes) {
    *err = "snapshot " + s.name + ": inode map table does not match the catalog";
    return nullptr;
  }
  for (uint32_t b = 0; b < addrs.size(); b++) {
    snap->imap_.set_block_addr(b, addrs[b]);
    if (addrs[b] == kNoAddr) continue;
    if (sb_.segment_of(addrs[b]) >= sb_.nsegments || !dev_->read(addrs[b], 1, blk)) {
      *err = "snapshot " + s.name + ": inode map block " + std::to_string(b) + " is unreadable";
      return nullptr;
    }
    snap->imap_.load_block(b, blk);
  }
  snap->imap_.finish_load(s.next_ino);
  snap->imap_.clear_dirty();
  return snap;
}

Status Store::for_each_referenced_block(const std::function<void(uint64_t)>& fn) {
  for (uint64_t a : imap_.block_addrs())
    if (a != kNoAddr) fn(a);
  for (uint64_t a : snapshot_tables_) fn(a);
  // Inode block by inode block, each read once (16 inodes share one): the walk is bound by
  // these reads, as small files keep their data pointers in the inode.
  std::map<uint64_t, std::vector<uint64_t>> by_block;
  for (uint64_t ino = kRootIno; ino < imap_.next_ino(); ino++) {
    const ImapEntry* e = imap_.find(ino);
    if (e && e->live) by_block[e->addr].push_back(ino);
  }
  alignas(kBlockSize) uint8_t blk[kBlockSize];
  size_t walked = 0;
  for (const auto& [addr, inos] : by_block) {
    if (addr != kNoAddr) fn(addr);
    bool have = false;
    for (uint64_t ino : inos) {
      CachedInode* c = icache_.find(ino);  // the cached copy may be newer (dirty)
      if (!c) {
        if (addr == kNoAddr) return Status::Io;  // live, never written, not cached
        if (!have && !dev_->read(addr, 1, blk)) return Status::Io;
        have = true;
        const ImapEntry* e = imap_.find(ino);
        Inode in;
        if (e->slot >= kInodesPerBlock || !decode_inode(blk + e->slot * kInodeBytes, &in) ||
            in.ino != ino)
          return Status::Io;
        icache_.count_miss();
        c = icache_.insert(in);
      }
      Status st = for_each_block(c, [&](uint64_t a, RecordKind, uint64_t) { fn(a); });
      if (st != Status::Ok) return st;
    }
    if (++walked % 64 == 0) trim();
  }
  trim();
  return Status::Ok;
}

void Store::pin_new_snapshot(const std::vector<uint64_t>& tables) {
  // At its checkpoint the new snapshot references exactly the blocks that are live
  // (the usage table counts every live block; fsck checks that it does), plus its table blocks,
  // which are not live data. So no walk is needed: pin every segment with live bytes. The only
  // extra is the catalog's segment, which the next full recompute (a delete) unpins if unused.
  std::vector<bool> pinned(sb_.nsegments, false);
  for (uint32_t s = 0; s < sb_.nsegments; s++) pinned[s] = sut_.is_pinned(s) || sut_.live(s) > 0;
  for (uint64_t a : tables)
    if (uint32_t s = sb_.segment_of(a); s < sb_.nsegments) pinned[s] = true;
  sut_.set_pinned(pinned);
}

Status Store::recompute_pins() {
  std::vector<bool> pinned(sb_.nsegments, false);
  Status st = pin_segments_of(catalog_.snapshots, &pinned);
  if (st == Status::Ok) sut_.set_pinned(pinned);
  return st;
}

Status Store::pin_segments_of(const std::vector<SnapshotInfo>& snaps, std::vector<bool>* pinned_out) {
  std::vector<bool>& pinned = *pinned_out;
  for (const SnapshotInfo& s : snaps) {
    std::string err;
    auto snap = open_snapshot(s, &err);
    if (!snap) return Status::Io;
    Status st = snap->for_each_referenced_block([&](uint64_t a) {
      uint32_t seg = sb_.segment_of(a);
      if (seg < sb_.nsegments) pinned[seg] = true;
    });
    if (st != Status::Ok) return st;
  }
  return Status::Ok;
}

Status Store::write_snapshot_metadata(int64_t now) {
  if (pending_snapshot_) {
    // The table is this checkpoint's inode map; written last block first so that each block
    // can name the next one.
    SnapshotInfo s = *pending_snapshot_;
    pending_snapshot_.reset();
    std::vector<uint64_t> addrs = imap_.block_addrs();
    addrs.resize(imap_.block_count(), kNoAddr);
    s.imap_blocks = uint32_t(addrs.size());
    s.next_ino = imap_.next_ino();
    size_t nblocks = (addrs.size() + kTableAddrsPerBlock - 1) / kTableAddrsPerBlock;
    if (nblocks == 0) nblocks = 1;
    uint64_t next = kNoAddr;
    alignas(kBlockSize) uint8_t blk[kBlockSize];
    for (size_t i = nblocks; i-- > 0;) {
      size_t first = i * kTableAddrsPerBlock;
      size_t count = std::min(kTableAddrsPerBlock, addrs.size() - std::min(first, addrs.size()));
      encode_table_block(s.id, addrs.data() + first, count, next, blk);
      SummaryRecord r;
      r.kind = RecordKind::SnapTable;
      r.ino = s.id;
      r.offset = i;
      next = log_.append_copy(r, blk);
      if (next == kNoAddr) return Status::Io;
      new_tables_.push_back(next);
    }
    s.table = next;
    catalog_.snapshots.push_back(s);
    catalog_dirty_ = true;
    pin_new_ = true;
  }
  if (!catalog_dirty_) return Status::Ok;
  alignas(kBlockSize) uint8_t blk[kBlockSize];
  encode_catalog(catalog_, blk);
  SummaryRecord r;
  r.kind = RecordKind::Catalog;
  uint64_t addr = log_.append_copy(r, blk);
  if (addr == kNoAddr) return Status::Io;
  if (catalog_addr_ != kNoAddr) sut_.sub_live(catalog_addr_, kBlockSize);
  catalog_addr_ = addr;
  sut_.add_live(addr, kBlockSize, now);
  catalog_dirty_ = false;
  return Status::Ok;
}

Status Store::create_snapshot(const std::string& name, int64_t time, SnapshotInfo* out) {
  if (failed_) return Status::Io;
  if (!valid_snapshot_name(name)) return Status::Inval;
  if (catalog_.find(name)) return Status::Exist;
  if (catalog_.snapshots.size() >= kMaxSnapshots) return Status::NoSpc;
  if (catalog_.next_id > kMaxSnapshotId) return Status::NoSpc;
  if (sb_.version < kFormatVersion) {
    // From here on an older nasd must refuse the volume: its cleaner knows nothing of pins.
    Superblock up = sb_;
    up.version = kFormatVersion;
    alignas(kBlockSize) uint8_t super[kBlockSize];
    encode_superblock(up, super);
    if (!dev_->write(0, super, 1) || !dev_->sync()) {
      fail();
      return Status::Io;
    }
    sb_.version = kFormatVersion;
  }
  SnapshotInfo s;
  s.id = catalog_.next_id++;
  s.name = name;
  s.time = time;
  pending_snapshot_ = s;
  catalog_dirty_ = true;
  Status st = checkpoint();
  if (st != Status::Ok) return st;
  *out = catalog_.snapshots.back();
  return Status::Ok;
}

Status Store::delete_snapshot(const std::string& name) {
  if (failed_) return Status::Io;
  auto& v = catalog_.snapshots;
  auto it = std::find_if(v.begin(), v.end(), [&](const SnapshotInfo& s) { return s.name == name; });
  if (it == v.end()) return Status::NoEnt;
  v.erase(it);
  catalog_dirty_ = true;
  pins_stale_ = true;
  return checkpoint();
}

Status Store::snapshot_exclusive_bytes(std::vector<uint64_t>* out) {
  const auto& snaps = catalog_.snapshots;
  out->assign(snaps.size(), 0);
  if (snaps.empty()) return Status::Ok;
  if (!failed_) {
    Status st = flush();  // so the live tree names only blocks on disk
    if (st != Status::Ok) return st;
  }
  constexpr uint64_t kLive = 1ull << 63;
  std::unordered_map<uint64_t, uint64_t> owners;  // block -> bit per snapshot, kLive
  for (size_t i = 0; i < snaps.size(); i++) {
    std::string err;
    auto snap = open_snapshot(snaps[i], &err);
    if (!snap) return Status::Io;
    Status st = snap->for_each_referenced_block([&](uint64_t a) { owners[a] |= 1ull << i; });
    if (st != Status::Ok) return st;
  }
  auto mark_live = [&](uint64_t a) {
    auto it = owners.find(a);
    if (it != owners.end()) it->second |= kLive;
  };
  Status st = for_each_referenced_block(mark_live);
  if (st != Status::Ok) return st;
  if (catalog_addr_ != kNoAddr) mark_live(catalog_addr_);
  for (const auto& [addr, mask] : owners)
    if (!(mask & kLive) && std::popcount(mask) == 1) (*out)[std::countr_zero(mask)] += kBlockSize;
  return Status::Ok;
}

}  // namespace nasd::fs::lfs
