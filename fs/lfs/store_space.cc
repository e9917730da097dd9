// Store: space admission, the cleaner's mechanism (liveness + relocation) and usage recount.
#include <chrono>
#include <cstring>
#include <set>

#include "fs/lfs/endian.h"
#include "fs/lfs/log_reader.h"
#include "fs/lfs/snapshot_catalog.h"
#include "fs/lfs/store.h"

namespace nasd::fs::lfs {

namespace {
// Share of the non-reserved log space clients may fill with live data. The slack keeps the
// cleaner efficient: the emptiest segment of a volume at this fill is at most this full.
constexpr double kMaxFill = 0.92;
}  // namespace

// The cleaner's room: copying a victim's live blocks (with the inodes and block-map nodes the
// copies dirty) must fit before the victim's segment comes back, and the cleaner picks several
// victims a pass.
uint64_t Store::reserve_blocks() const {
  uint64_t segs = std::max<uint64_t>(4, sb_.nsegments / 32);
  return segs * sb_.segment_blocks;
}

// Every inode map block may be dirty, a snapshot adds its table and every checkpoint may
// rewrite the catalog: all of it is appended to the log by checkpoint() after the flush.
uint64_t Store::checkpoint_room() const {
  const uint64_t imap_blocks = (sb_.max_inodes + kImapEntriesPerBlock - 1) / kImapEntriesPerBlock;
  const uint64_t table_blocks = imap_blocks / kTableAddrsPerBlock + 1;
  return log_blocks_for(imap_blocks + table_blocks + 1, 0, 0);
}

// Enough for a run of deletes after every ordinary call got NoSpc: each dirties a directory
// block or two and a few inodes, and the checkpoint that follows them (the freed space is
// reusable only after one) takes up to checkpoint_room() again.
uint64_t Store::delete_room() const {
  constexpr uint64_t kDeletesBetweenCheckpoints = 16;
  return checkpoint_room() + kDeletesBetweenCheckpoints * call_blocks(0);
}

uint64_t Store::kept_free(Claim claim) const {
  const uint64_t keep = reserve_blocks() + checkpoint_room();
  return claim == Claim::Ordinary ? keep + delete_room() : keep;
}

uint64_t Store::capacity_bytes() const {
  // + current and next segment, and the room kept for checkpoints and deletes.
  uint64_t reserve_segs = reserve_blocks() / sb_.segment_blocks + 2 +
                          (checkpoint_room() + delete_room() + sb_.segment_blocks - 1) /
                              sb_.segment_blocks;
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

uint64_t Store::call_blocks(uint64_t blocks) {
  // A contiguous run of `blocks` file blocks needs at most one leaf per kPtrsPerNode blocks
  // plus two at each level (the run's ends); a namespace change touches a few directory
  // blocks (header, bucket, a split's new bucket and table block), each with its nodes.
  constexpr uint64_t kNodesPerRun = 2 * kTreeCount;
  constexpr uint64_t kDirectoryBlocks = 4 * (1 + kTreeCount);
  return blocks + blocks / kPtrsPerNode + kNodesPerRun + kDirectoryBlocks;
}

uint64_t Store::log_blocks_for(uint64_t blocks, uint64_t inodes, uint64_t records) const {
  // Each unit holds at most kMaxRecords records, one of them possibly an inode block it
  // started (a new unit starts a new inode block); a unit never crosses a segment, so each
  // segment the group reaches cuts one short and may leave a block of its tail unused.
  const uint64_t payload = blocks + inodes / kInodesPerBlock + 1 + records;
  const uint64_t spans = (2 * payload + 2 * kMaxRecords) / (sb_.segment_blocks - 2) + 2;
  const uint64_t units = payload / (kMaxRecords - 1) + 1 + spans;
  return payload + 2 * units + spans;
}

uint64_t Store::flush_bound() {
  // Dirty data blocks plus every block-map node the flush writes: the dirty ones and, for
  // each dirty block, the nodes above it (a flush rewrites the path to the inode).
  uint64_t data = 0;
  std::set<std::pair<uint64_t, uint64_t>> nodes;
  auto add_path = [&](uint64_t ino, NodeId n) {
    while (nodes.insert({ino, node_key(n)}).second && !is_root(n)) n = parent_of(n);
  };
  bcache_.for_each_dirty([&](uint64_t ino, uint64_t key) {
    if (is_node_key(key)) {
      const NodeId n = node_from_key(key);
      if (valid_node(n)) add_path(ino, n);
      return;
    }
    data++;
    BlockPath p;
    if (locate(key, &p) && !p.direct) add_path(ino, node_covering(p.tree, 1, p.rel));
  });
  walked_bound_ = data + nodes.size();
  walked_dirtied_ = bcache_.dirtied();
  return walked_bound_;
}

uint64_t Store::flush_estimate() const {
  // A block dirtied since the walk adds itself and at most one node per level above it.
  return walked_bound_ + (bcache_.dirtied() - walked_dirtied_) * (1 + kTreeCount);
}

bool Store::log_fits(uint64_t blocks, uint64_t extra, uint64_t keep) const {
  const uint64_t records = frees_.size() + 1;
  const uint64_t inodes = icache_.dirty_count() + 8;  // + the inodes a call dirties
  return log_blocks_for(blocks + extra, inodes, records) + keep <= log_.blocks_available();
}

Status Store::reserve(uint64_t new_blocks, uint64_t rewritten_blocks, Claim claim) {
  if (failed_) return Status::RoFs;
  // While the host is full only calls that allocate nothing go on (see if space came back,
  // at most every kHeldRetryInterval: each try writes the whole held group).
  if (host_full_ && new_blocks > 0) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_held_retry_ < kHeldRetryInterval || (last_held_retry_ = now, !retry_held()))
      return Status::NoSpc;
  }
  if (new_blocks > 0 && claim != Claim::Replay) {
    uint64_t meta = new_blocks / (kPtrsPerNode / 2) + 4;  // block-map nodes, inode block
    if (used_space_bytes() + (new_blocks + meta) * kBlockSize > capacity_bytes())
      return Status::NoSpc;
  }
  const uint64_t extra = call_blocks(new_blocks + rewritten_blocks);
  const uint64_t keep = kept_free(claim);
  if (log_fits(flush_estimate(), extra, keep) || log_fits(flush_bound(), extra, keep))
    return Status::Ok;
  // Write the dirty set out (it fits: admitted), then get back the segments emptied since
  // the last checkpoint, then clean.
  for (int round = 0; round < 16; round++) {
    Status st = checkpoint();
    if (st != Status::Ok) return st;
    if (log_fits(flush_bound(), extra, keep)) return Status::Ok;
    if (clean(4) == 0) return Status::NoSpc;
  }
  return Status::NoSpc;
}

std::optional<Status> Store::reserve_without_io(uint64_t new_blocks,
                                                uint64_t rewritten_blocks) const {
  if (failed_) return Status::RoFs;
  if (host_full_) return std::nullopt;  // a retry of the held group writes
  uint64_t meta = new_blocks == 0 ? 0 : new_blocks / (kPtrsPerNode / 2) + 4;
  if (new_blocks > 0 && used_space_bytes() + (new_blocks + meta) * kBlockSize > capacity_bytes())
    return Status::NoSpc;
  // The room reserve() asks for; short of it, it would walk, checkpoint or clean.
  if (log_fits(flush_estimate(), call_blocks(new_blocks + rewritten_blocks),
               kept_free(Claim::Ordinary)))
    return Status::Ok;
  return std::nullopt;
}

void Store::note_log_full(uint64_t need) {
  if (log_full_.exchange(true)) return;
  report(opts_.backing + ": the log has no room for a flush of " + std::to_string(need) +
         " blocks (" + std::to_string(log_.blocks_available()) + " free): volume " +
         std::to_string(opts_.volume_id) +
         " keeps it in memory (and in the NVRAM journal) and answers NOSPC to calls that need "
         "space until the cleaner makes room");
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
    // Copies of the live blocks (plus their inodes and nodes: twice as many is generous for
    // a segment, whose nodes were written with their blocks) must fit in the log along with
    // the dirty set, leaving the checkpoint that ends the pass its room.
    // It never takes the last free segment either: the log must always be able to announce
    // a next one (LogWriter::blocks_available).
    uint64_t live_blocks = sut_.live(v) / kBlockSize + 1;
    if (!log_fits(flush_bound(), 2 * live_blocks + 64, checkpoint_room() + sb_.segment_blocks))
      break;
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
