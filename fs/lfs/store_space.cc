// Store: space admission, the cleaner's mechanism (liveness + relocation) and usage recount.
#include <chrono>
#include <cstring>

#include "fs/lfs/endian.h"
#include "fs/lfs/log_reader.h"
#include "fs/lfs/store.h"

namespace nasd::fs::lfs {

namespace {
// Share of the non-reserved log space clients may fill with live data. The slack keeps the
// cleaner efficient: the emptiest segment of a volume at this fill is at most this full.
constexpr double kMaxFill = 0.92;
}  // namespace

uint64_t Store::reserve_blocks() const {
  uint64_t segs = std::max<uint64_t>(4, sb_.nsegments / 32);
  return segs * sb_.segment_blocks;
}

uint64_t Store::capacity_bytes() const {
  uint64_t reserve_segs = reserve_blocks() / sb_.segment_blocks + 2;  // + current and next
  uint64_t usable = sb_.nsegments > reserve_segs ? sb_.nsegments - reserve_segs : 0;
  return uint64_t(double(usable * sb_.segment_bytes()) * kMaxFill);
}

uint64_t Store::used_space_bytes() const {
  return sut_.total_live() + sut_.snapshot_held_bytes() + pending_blocks_ * kBlockSize;
}

bool Store::needs_cleaning() const {
  uint32_t threshold = uint32_t(std::max<uint64_t>(reserve_blocks() / sb_.segment_blocks * 2,
                                                   sb_.nsegments / 10));
  return sut_.free_count() < threshold;
}

Status Store::reserve(uint64_t new_blocks) {
  if (failed_) return Status::RoFs;
  // While the host is full only calls that allocate nothing go on (see if space came back,
  // at most every kHeldRetryInterval: each try writes the whole held group).
  if (host_full_ && new_blocks > 0) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_held_retry_ < kHeldRetryInterval || (last_held_retry_ = now, !retry_held()))
      return Status::NoSpc;
  }
  uint64_t meta = new_blocks / (kPtrsPerNode / 2) + 4;  // block-map nodes, inode block
  if (used_space_bytes() + (new_blocks + meta) * kBlockSize > capacity_bytes())
    return Status::NoSpc;
  uint64_t dirty = bcache_.dirty_count() + icache_.dirty_count() / kInodesPerBlock;
  return ensure_log_room(dirty + new_blocks + meta + 16);
}

std::optional<Status> Store::reserve_without_io(uint64_t new_blocks) const {
  if (failed_) return Status::RoFs;
  if (host_full_) return std::nullopt;  // a retry of the held group writes
  uint64_t meta = new_blocks == 0 ? 0 : new_blocks / (kPtrsPerNode / 2) + 4;
  if (new_blocks > 0 && used_space_bytes() + (new_blocks + meta) * kBlockSize > capacity_bytes())
    return Status::NoSpc;
  // The same room reserve()/make_log_room() ask ensure_log_room() for; short of it they would
  // checkpoint or clean.
  uint64_t dirty = bcache_.dirty_count() + icache_.dirty_count() / kInodesPerBlock;
  if (log_.blocks_available() >= dirty + new_blocks + meta + 16 + reserve_blocks())
    return Status::Ok;
  return std::nullopt;
}

void Store::make_log_room() {
  if (failed_) return;
  uint64_t dirty = bcache_.dirty_count() + icache_.dirty_count() / kInodesPerBlock;
  (void)ensure_log_room(dirty + 16);  // on failure the cleaner's reserve still takes the update
}

// Makes sure the log can take `blocks` more blocks without touching the cleaner's reserve.
Status Store::ensure_log_room(uint64_t blocks) {
  for (int round = 0; round < 64; round++) {
    if (log_.blocks_available() >= blocks + reserve_blocks()) return Status::Ok;
    if (cleaning_) return Status::Ok;  // the cleaner may use the reserve
    // Segments emptied by overwrites come back at a checkpoint; after that, clean.
    Status st = checkpoint();
    if (st != Status::Ok) return st;
    if (log_.blocks_available() >= blocks + reserve_blocks()) return Status::Ok;
    if (clean(4) == 0) return Status::NoSpc;
  }
  return Status::NoSpc;
}

uint32_t Store::clean(uint32_t max_segments, double max_utilization) {
  if (failed_ || cleaning_) return 0;
  cleaning_ = true;
  stats_.cleaner_passes++;
  int64_t now = now_time().sec;
  const LogPosition& pos = log_.position();
  std::vector<uint32_t> victims =
      sut_.pick_victims(now, max_segments, {pos.seg, pos.next_seg}, max_utilization);
  std::vector<uint8_t> image(size_t(sb_.segment_blocks) * kBlockSize);
  std::vector<uint32_t> done;
  for (uint32_t v : victims) {
    // Copies of the live blocks (plus their inodes and nodes) must fit in the log.
    uint64_t live_blocks = sut_.live(v) / kBlockSize + 1;
    if (log_.blocks_available() < 2 * live_blocks + 64) break;
    if (!dev_->read(sb_.segment_start(v), sb_.segment_blocks, image.data())) break;
    uint32_t off = 0;
    uint64_t last_lsn = 0;
    bool error = false;
    while (off + 1 < sb_.segment_blocks && !error) {
      LogUnit u;
      if (!parse_unit(image.data(), sb_, v, off, &u)) break;
      if (u.summary.lsn <= last_lsn) break;  // stale units from the segment's previous use
      last_lsn = u.summary.lsn;
      size_t bi = 0;
      for (const SummaryRecord& r : u.summary.records) {
        if (!r.has_block()) continue;
        bool live;
        if (relocate(r, u.block_addr(sb_, bi), u.block(bi), &live) != Status::Ok) error = true;
        if (live) stats_.cleaner_blocks_copied++;
        bi++;
      }
      off = u.end_off();
    }
    if (error || flush() != Status::Ok) break;
    done.push_back(v);
  }
  uint32_t freed = 0;
  if (!done.empty() && checkpoint() == Status::Ok) {
    for (uint32_t v : done) freed += sut_.is_free(v) ? 1 : 0;
  }
  stats_.cleaned_segments += freed;
  cleaning_ = false;
  // No trim() here: callers in the middle of an operation hold cache pointers.
  return freed;
}

Status Store::relocate(const SummaryRecord& rec, uint64_t addr, const uint8_t* data, bool* live) {
  *live = false;
  if (rec.kind == RecordKind::ImapBlock) {
    if (rec.offset < imap_.block_count() && imap_.block_addr(uint32_t(rec.offset)) == addr) {
      imap_.mark_dirty(uint32_t(rec.offset));
      *live = true;
    }
    return Status::Ok;
  }
  if (rec.kind == RecordKind::Catalog) {
    if (addr == catalog_addr_) {
      catalog_dirty_ = true;  // rewritten by the checkpoint that ends the cleaning pass
      *live = true;
    }
    return Status::Ok;
  }
  if (rec.kind == RecordKind::SnapTable) return Status::Ok;  // pinned: never in a victim
  if (rec.kind == RecordKind::InodeBlock) {
    for (uint64_t s = 0; s < rec.offset && s < kInodesPerBlock; s++) {
      Inode in;
      if (!decode_inode(data + s * kInodeBytes, &in)) continue;
      const ImapEntry* e = imap_.find(in.ino);
      if (!e || !e->live || e->addr != addr || e->slot != s) continue;
      CachedInode* c;
      Status st = load(in.ino, &c);
      if (st != Status::Ok) return st;
      icache_.mark_dirty(c);
      *live = true;
    }
    return Status::Ok;
  }
  const ImapEntry* e = imap_.find(rec.ino);
  if (!e || !e->live || e->gen != rec.gen) return Status::Ok;
  CachedInode* c;
  Status st = load(rec.ino, &c);
  if (st != Status::Ok) return st;
  uint64_t key = rec.offset;
  CachedBlock* b = bcache_.find(rec.ino, key);
  if (b && b->dirty) {  // rewritten by the next flush anyway
    *live = b->addr == addr;
    return Status::Ok;
  }
  uint64_t cur = kNoAddr;
  if (b) {
    cur = b->addr;
  } else if (rec.kind == RecordKind::Data) {
    if (is_node_key(key)) return Status::Ok;
    st = lookup_addr(c, key, &cur);
    if (st == Status::FBig) return Status::Ok;
    if (st != Status::Ok) return st;
  } else {
    if (!is_node_key(key) || !valid_node(node_from_key(key))) return Status::Ok;
    NodeId id = node_from_key(key);
    if (is_root(id)) {
      cur = c->inode.tree[id.tree];
    } else {
      CachedBlock* parent;
      st = get_node(c, parent_of(id), false, &parent);
      if (st != Status::Ok) return st;
      if (parent) cur = get64(parent->data + slot_in_parent(id) * 8);
    }
  }
  if (cur != addr) return Status::Ok;
  if (!b) {
    b = bcache_.insert(rec.ino, key, BlockCache::Fill::Uninitialized);
    std::memcpy(b->data, data, kBlockSize);
    b->addr = addr;
  }
  bcache_.mark_dirty(b);
  icache_.mark_dirty(c);
  *live = true;
  return Status::Ok;
}

Status Store::recount_usage() {
  sut_.reset_usage();
  int64_t now = now_time().sec;
  for (uint64_t ino = kRootIno; ino < imap_.next_ino(); ino++) {
    const ImapEntry* e = imap_.find(ino);
    if (!e || !e->live) continue;
    if (e->addr != kNoAddr) sut_.add_live(e->addr, kInodeBytes, now);
    CachedInode* c;
    Status st = load(ino, &c);
    if (st != Status::Ok) return st;
    st = for_each_block(c, [&](uint64_t a, RecordKind, uint64_t) {
      sut_.add_live(a, kBlockSize, now);
    });
    if (st != Status::Ok) return st;
    if (ino % 1024 == 0) trim();
  }
  for (uint64_t a : imap_.block_addrs())
    if (a != kNoAddr) sut_.add_live(a, kBlockSize, now);
  if (catalog_addr_ != kNoAddr) sut_.add_live(catalog_addr_, kBlockSize, now);
  trim();
  return Status::Ok;
}

}  // namespace nasd::fs::lfs
