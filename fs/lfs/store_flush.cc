// Store: writing dirty state to the log (flush), checkpoints and group commit.
#include <algorithm>
#include <cstring>

#include "fs/lfs/endian.h"
#include "fs/lfs/snapshot_catalog.h"
#include "fs/lfs/store.h"

namespace nasd::fs::lfs {

bool Store::has_dirty() const {
  return icache_.dirty_count() > 0 || bcache_.dirty_count() > 0 || !frees_.empty() ||
         applied_jseq_ != written_jseq_;
}

// Appends one inode's dirty data, then its dirty block-map nodes bottom-up (each node's address
// is known only once its children are placed), then the inode itself.
Status Store::write_inode_group(CachedInode* c, int64_t now) {
  Inode& in = c->inode;
  SummaryRecord rec;
  rec.ino = in.ino;
  rec.gen = in.gen;
  for (CachedBlock* b : bcache_.range(in.ino, 0, kNodeKeyBit)) {
    if (!b->dirty) continue;
    rec.kind = RecordKind::Data;
    rec.offset = b->key;
    uint64_t addr = log_.append(rec, b->data);
    if (addr == kNoAddr) return Status::NoSpc;
    flight_pins_.push_back(b->pin());  // copy-on-write for writers until the group is written
    uint64_t old;
    Status st = set_pointer(c, b->key, addr, &old);
    if (st != Status::Ok) return st;
    if (old != kNoAddr) sut_.sub_live(old, kBlockSize);
    else in.blocks++;
    if (b->fresh) {
      c->pending_blocks--;
      pending_blocks_--;
    }
    sut_.add_live(addr, kBlockSize, now);
    b->addr = addr;
    bcache_.mark_clean(b);
  }
  for (uint32_t level = 1; level <= kTreeCount; level++) {
    uint64_t lo = node_key(NodeId{0, level, 0});
    uint64_t hi = node_key(NodeId{0, level + 1, 0});
    for (CachedBlock* b : bcache_.range(in.ino, lo, hi)) {
      if (!b->dirty) continue;
      NodeId id = node_from_key(b->key);
      rec.kind = RecordKind::Node;
      rec.offset = b->key;
      uint64_t addr = log_.append(rec, b->data);
      if (addr == kNoAddr) return Status::NoSpc;
      flight_pins_.push_back(b->pin());
      uint64_t old;
      if (is_root(id)) {
        old = in.tree[id.tree];
        in.tree[id.tree] = addr;
      } else {
        CachedBlock* parent;
        Status st = get_node(c, parent_of(id), true, &parent);
        if (st != Status::Ok) return st;
        uint32_t slot = slot_in_parent(id);
        parent->unshare(true);
        old = get64(parent->data + slot * 8);
        put64(parent->data + slot * 8, addr);
        bcache_.mark_dirty(parent);
      }
      if (old != kNoAddr) sut_.sub_live(old, kBlockSize);
      else in.blocks++;
      sut_.add_live(addr, kBlockSize, now);
      b->addr = addr;
      bcache_.mark_clean(b);
    }
  }
  uint64_t addr;
  uint16_t slot;
  if (!log_.append_inode(in, &addr, &slot)) return Status::NoSpc;
  const ImapEntry* e = imap_.find(in.ino);
  if (e && e->addr != kNoAddr) sut_.sub_live(e->addr, kInodeBytes);
  imap_.set(in.ino, ImapEntry{addr, slot, true, in.gen});
  sut_.add_live(addr, kInodeBytes, now);
  icache_.mark_clean(c);
  return Status::Ok;
}

Status Store::flush() {
  bool to_write = false;
  Status st = begin_flush(&to_write);
  if (st != Status::Ok || !to_write) return st;
  return write_flush();
}

Status Store::begin_flush(bool* to_write) {
  *to_write = false;
  if (failed_) return Status::Io;
  wait_for_flight();  // groups reach the device one at a time, in log order
  // A held group must reach the disk before anything appended after it.
  if (!retry_held()) return failed_ ? Status::Io : Status::NoSpc;
  if (!has_dirty()) return Status::Ok;
  // Admission keeps the dirty set within the log's room; should that ever fail, the group is
  // not started (nothing changes) and the caller gets NoSpc: everything stays in memory and in
  // the NVRAM journal until the cleaner or deletes make room. The checkpoint that must follow
  // keeps its room.
  const uint64_t need = log_blocks_for(flush_bound(), icache_.dirty_count(), frees_.size() + 1);
  if (need + checkpoint_room() > log_.blocks_available()) {
    note_log_full(need);
    return Status::NoSpc;
  }
  if (log_full_.exchange(false))
    report(opts_.backing + ": the log has room again: volume " + std::to_string(opts_.volume_id) +
           " writes its dirty state out");
  int64_t now = now_time().sec;
  // Frees go first: a number freed and reused within one group must end up live.
  for (auto& [ino, gen] : frees_) {
    SummaryRecord r;
    r.kind = RecordKind::InodeFree;
    r.ino = ino;
    r.gen = gen;
    log_.append_record(r);
  }
  frees_.clear();
  // Every inode with dirty blocks is itself dirty (modify_block marks it).
  std::vector<CachedInode*> dirty = icache_.dirty();
  std::sort(dirty.begin(), dirty.end(),
            [](CachedInode* a, CachedInode* b) { return a->inode.ino < b->inode.ino; });
  for (CachedInode* c : dirty) {
    Status st = write_inode_group(c, now);
    if (st != Status::Ok) {
      if (st == Status::NoSpc)  // admission's bound was wrong: say by how much
        report(opts_.backing + ": flush group past its bound of " + std::to_string(need) +
               " blocks (" + std::to_string(log_.blocks_available()) + " left)");
      fail();  // in-memory pointers may already name unwritten blocks
      return st == Status::NoSpc ? Status::Io : st;
    }
  }
  if (log_.group_empty()) {
    // Only the journal sequence advanced: record it with an empty unit so durable_seq() moves.
    log_.append_record(SummaryRecord{RecordKind::InodeFree, 0, 0, 0, 0});
  }
  // Everything dirty is in the group now: the bound starts again from nothing.
  walked_bound_ = 0;
  walked_dirtied_ = bcache_.dirtied();
  flush_jseq_ = applied_jseq_;
  flush_time_ = now;
  log_.seal_group(flush_jseq_, now);
  written_jseq_ = flush_jseq_;  // appended: written, held, or the volume fails
  stats_.flushes++;
  // Reserved before the caller lets anyone in: a read of an address of this group waits for it.
  flight_reservation_ = dev_->reserve_for_log();
  {
    std::lock_guard<std::mutex> g(flight_mu_);
    in_flight_ = true;
  }
  *to_write = true;
  return Status::Ok;
}

void Store::wait_for_flight() {
  std::unique_lock<std::mutex> g(flight_mu_);
  flight_cv_.wait(g, [&] { return !in_flight_; });
}

Status Store::write_flush() {
  const uint64_t jseq = flush_jseq_;
  Status st = Status::Ok;
  if (!log_.write_sealed(flight_reservation_)) {
    st = write_failed(jseq);  // held (reads see it), or the volume failed
  } else {
    std::lock_guard<std::mutex> g(written_mu_);
    written_lsn_ = log_.position().lsn - 1;
    written_jseq_snapshot_ = jseq;
  }
  flight_reservation_.unlock();
  const std::shared_ptr<BlockPool>& pool = bcache_.shared_pool();
  for (BlockBuffer* b : flight_pins_) pool->unref(b);
  flight_pins_.clear();
  {
    std::lock_guard<std::mutex> g(flight_mu_);
    in_flight_ = false;
  }
  flight_cv_.notify_all();
  return st;
}

uint64_t Store::written_lsn() const {
  std::lock_guard<std::mutex> g(written_mu_);
  return written_lsn_;
}

Status Store::sync_to(uint64_t lsn) {
  std::lock_guard<std::mutex> g(sync_mu_);
  if (durable_lsn_ >= lsn) return Status::Ok;
  uint64_t target_lsn, target_jseq;
  {
    std::lock_guard<std::mutex> w(written_mu_);
    target_lsn = written_lsn_;
    target_jseq = written_jseq_snapshot_;
  }
  if (!dev_->sync()) {
    if (BlockDevice::is_space_error(dev_->last_error())) return Status::NoSpc;
    fail();
    return Status::Io;
  }
  stats_.syncs++;
  durable_lsn_ = target_lsn;
  durable_jseq_ = std::max(durable_jseq_.load(), target_jseq);
  return Status::Ok;
}

Status Store::checkpoint() {
  if (failed_) return Status::Io;
  Status st = flush();
  if (st != Status::Ok) return st;
  int64_t now = now_time().sec;
  log_.ensure_next_segment();
  alignas(kBlockSize) uint8_t blk[kBlockSize];
  std::vector<uint32_t> dirty(imap_.dirty_blocks().begin(), imap_.dirty_blocks().end());
  // checkpoint_room() is kept for this; a log short of it (should not happen) keeps the dirty
  // inode map blocks for a later checkpoint: the flushed groups are in the log already.
  const uint64_t tables = pending_snapshot_ ? imap_.block_count() / kTableAddrsPerBlock + 1 : 0;
  if (log_blocks_for(dirty.size() + tables + 1, 0, 0) > log_.blocks_available()) {
    note_log_full(dirty.size());
    return Status::NoSpc;
  }
  for (uint32_t b : dirty) {
    imap_.encode_block(b, blk);
    SummaryRecord r;
    r.kind = RecordKind::ImapBlock;
    r.offset = b;
    uint64_t addr = log_.append_copy(r, blk);
    if (addr == kNoAddr) {
      report(opts_.backing + ": checkpoint past its room (" + std::to_string(dirty.size()) +
             " inode map blocks)");
      fail();
      return Status::Io;
    }
    uint64_t old = imap_.block_addr(b);
    if (old != kNoAddr) sut_.sub_live(old, kBlockSize);
    imap_.set_block_addr(b, addr);
    sut_.add_live(addr, kBlockSize, now);
  }
  imap_.clear_dirty();
  if (write_snapshot_metadata(now) != Status::Ok) return write_failed(written_jseq_);
  if (!log_.commit_group(written_jseq_, now)) return write_failed(written_jseq_);
  {
    std::lock_guard<std::mutex> g(written_mu_);
    written_lsn_ = log_.position().lsn - 1;
  }
  // Pins change with the catalog and are recorded in the same checkpoint, so they are right
  // whichever checkpoint a crash leaves in charge. A new snapshot only adds pins (no walk); a
  // deleted one's can only be dropped by walking all that remain. Segments unpinned here are
  // reused only after release_empty below, once this checkpoint is durable.
  if (pin_new_) pin_new_snapshot(new_tables_);
  pin_new_ = false;
  new_tables_.clear();
  if (pins_stale_) {
    if (recompute_pins() != Status::Ok) {
      fail();
      return Status::Io;
    }
    pins_stale_ = false;
  }
  Checkpoint cp;
  cp.seq = cp_seq_ + 1;
  cp.head = log_.position();
  cp.durable_jseq = written_jseq_;
  cp.next_ino = imap_.next_ino();
  cp.time = now;
  cp.catalog_addr = catalog_addr_;
  cp.imap_addrs = imap_.block_addrs();
  cp.imap_addrs.resize(imap_.block_count(), kNoAddr);
  cp.sut = sut_.usage();
  for (uint32_t seg = 0; seg < cp.sut.size(); seg++) cp.sut[seg].pinned = sut_.is_pinned(seg);
  std::vector<uint8_t> img = encode_checkpoint(cp);
  if (img.size() > size_t(sb_.cp_blocks) * kBlockSize) {
    fail();
    return Status::Io;
  }
  {
    // The log must be durable before the checkpoint that points into it.
    std::lock_guard<std::mutex> g(sync_mu_);
    if (!dev_->sync() || !dev_->write(sb_.cp_block[cp.seq % 2], img.data(),
                                      uint32_t(img.size() / kBlockSize)) ||
        !dev_->sync()) {
      // The other checkpoint copy is still whole; on a full host the next checkpoint retries.
      if (BlockDevice::is_space_error(dev_->last_error())) return Status::NoSpc;
      fail();
      return Status::Io;
    }
    stats_.syncs += 2;
    durable_lsn_ = cp.head.lsn - 1;
    durable_jseq_ = std::max(durable_jseq_.load(), written_jseq_);
  }
  cp_seq_ = cp.seq;
  cp_blocks_written_ = log_.blocks_written();
  stats_.checkpoints++;
  sut_.release_empty({cp.head.seg, cp.head.next_seg});
  // The log announced no next segment (none was free when it was due) and segments came back
  // just now: one more checkpoint (no data) records one, or the log could not go on past its
  // current segment. Announcing it without a checkpoint is not safe: roll-forward follows the
  // announcements in the log, and the last one said "none".
  if (cp.head.next_seg >= sb_.nsegments && sut_.free_count() > 0) return checkpoint();
  return Status::Ok;
}

uint64_t Store::log_bytes_since_checkpoint() const {
  return (log_.blocks_written() - cp_blocks_written_) * kBlockSize;
}

void Store::trim() {
  bcache_.trim();
  icache_.trim();
}

}  // namespace nasd::fs::lfs
