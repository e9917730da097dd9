// Store lifecycle (format, open, roll-forward recovery) and inode bookkeeping.
#include "fs/lfs/store.h"

#include <time.h>

#include <cstdio>
#include <cstring>

#include "fs/lfs/log_reader.h"
#include "util/log.h"

namespace nasd::fs::lfs {

namespace {
// The CacheOnlyReads scope of this thread: 0 none, 1 open, 2 open and refused.
thread_local int cache_only_state = 0;
}  // namespace

CacheOnlyReads::CacheOnlyReads() { cache_only_state = 1; }
CacheOnlyReads::~CacheOnlyReads() { cache_only_state = 0; }
bool CacheOnlyReads::refused() const { return cache_only_state == 2; }
bool CacheOnlyReads::active() { return cache_only_state != 0; }
Status CacheOnlyReads::refuse() {
  cache_only_state = 2;
  return Status::Io;
}

CachedBlock* Store::cached_block(uint64_t ino, uint64_t key) {
  return CacheOnlyReads::active() ? bcache_.find_shared(ino, key) : bcache_.find(ino, key);
}

CachedInode* Store::cached_inode(uint64_t ino) {
  return CacheOnlyReads::active() ? icache_.find_shared(ino) : icache_.find(ino);
}

Time now_time() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return Time{int64_t(ts.tv_sec), uint32_t(ts.tv_nsec)};
}

Store::Store(std::shared_ptr<BlockDevice> dev, const Superblock& sb, const LfsOptions& opts)
    : dev_(std::move(dev)), sb_(sb), opts_(opts), imap_(sb.max_inodes), sut_(sb),
      log_(dev_.get(), sb_, &sut_),
      bcache_(opts.cache_bytes - opts.cache_bytes / 8),
      icache_(opts.cache_bytes / 8) {}

Store::~Store() = default;

bool Store::format(const LfsOptions& opts, std::string* err) {
  std::string why;
  auto probe = BlockDevice::open(opts.backing, opts.size, err, opts.preallocate);
  if (!probe) return false;
  uint64_t bytes = probe->size_bytes();
  Superblock sb;
  if (!plan_layout(bytes, opts.segment_size, opts.volume_id, &sb, &why)) {
    *err = opts.backing + ": " + why;
    return false;
  }
  // Invalidate both checkpoint regions before anything else, then write checkpoint 1.
  std::vector<uint8_t> zero(size_t(sb.cp_blocks) * kBlockSize, 0);
  for (int r = 0; r < 2; r++)
    if (!probe->write(sb.cp_block[r], zero.data(), sb.cp_blocks)) {
      *err = opts.backing + ": write failed";
      return false;
    }
  Checkpoint cp;
  cp.seq = 1;
  cp.head = LogPosition{0, 0, 1, 1, 0};
  cp.time = now_time().sec;
  cp.sut.resize(sb.nsegments);
  std::vector<uint8_t> img = encode_checkpoint(cp);
  alignas(kBlockSize) uint8_t super[kBlockSize];
  encode_superblock(sb, super);
  if (!probe->write(sb.cp_block[1], img.data(), uint32_t(img.size() / kBlockSize)) ||
      !probe->sync() || !probe->write(0, super, 1) || !probe->sync()) {
    *err = opts.backing + ": write failed";
    return false;
  }
  return true;
}

std::unique_ptr<Store> Store::open(const LfsOptions& opts, std::string* err) {
  std::string warning;
  auto dev = BlockDevice::open(opts.backing, 0, err, opts.preallocate && !opts.read_only,
                               &warning);
  if (!dev) return nullptr;
  if (opts.write_gate) dev->set_write_gate(opts.write_gate);
  if (opts.write_fault) dev->set_write_fault_hook(opts.write_fault);
  alignas(kBlockSize) uint8_t super[kBlockSize];
  Superblock sb;
  std::string why;
  if (!dev->read(0, 1, super) || !decode_superblock(super, &sb, &why)) {
    *err = opts.backing + ": " + (why.empty() ? "cannot read superblock" : why);
    return nullptr;
  }
  if (sb.segment_start(sb.nsegments) * kBlockSize > dev->size_bytes()) {
    *err = opts.backing + ": device is smaller than the volume";
    return nullptr;
  }
  std::unique_ptr<Store> s(new Store(std::move(dev), sb, opts));
  if (!warning.empty()) s->report(warning);
  if (!s->load_checkpoint(err)) return nullptr;
  s->roll_forward();
  if (opts.read_only) {
    s->failed_ = true;  // refuses every write; recovered state stays in memory
    if (s->stats_.recovered_units > 0 && s->recount_usage() != Status::Ok) {
      *err = opts.backing + ": recovery failed (I/O error)";
      return nullptr;
    }
    return s;
  }
  if (s->stats_.recovered_units > 0) {
    // The checkpoint's usage table predates the recovered units: recount, then checkpoint so
    // the next crash starts from here.
    // A log too full for the checkpoint (NoSpc) is no reason to refuse the volume: the
    // recovered groups stay in the log, and the next checkpoint records them.
    Status cp = Status::Ok;
    if (s->recount_usage() != Status::Ok ||
        ((cp = s->checkpoint()) != Status::Ok && cp != Status::NoSpc)) {
      *err = opts.backing + ": recovery failed (I/O error)";
      return nullptr;
    }
  }
  return s;
}

bool Store::load_checkpoint(std::string* err) {
  Checkpoint best;
  bool found = false;
  std::vector<uint8_t> buf(size_t(sb_.cp_blocks) * kBlockSize);
  for (int r = 0; r < 2; r++) {
    Checkpoint cp;
    if (!dev_->read(sb_.cp_block[r], sb_.cp_blocks, buf.data())) continue;
    if (!decode_checkpoint(buf.data(), buf.size(), sb_, &cp)) continue;
    if (!found || cp.seq > best.seq) {
      best = std::move(cp);
      found = true;
    }
  }
  if (!found) {
    *err = opts_.backing + ": no valid checkpoint";
    return false;
  }
  alignas(kBlockSize) uint8_t blk[kBlockSize];
  for (uint32_t b = 0; b < best.imap_addrs.size(); b++) {
    uint64_t a = best.imap_addrs[b];
    imap_.set_block_addr(b, a);
    if (a == kNoAddr) continue;
    if (!dev_->read(a, 1, blk)) {
      *err = opts_.backing + ": cannot read inode map block " + std::to_string(b);
      return false;
    }
    imap_.load_block(b, blk);
  }
  imap_.finish_load(best.next_ino);
  sut_.load(best.sut, {best.head.seg, best.head.next_seg});
  if (best.catalog_addr != kNoAddr && !load_catalog(best.catalog_addr, err)) return false;
  log_.set_position(best.head);
  cp_seq_ = best.seq;
  applied_jseq_ = written_jseq_ = best.durable_jseq;
  written_jseq_snapshot_ = best.durable_jseq;
  written_lsn_ = durable_lsn_ = best.head.lsn - 1;
  durable_jseq_ = best.durable_jseq;
  return true;
}

// Replays every complete group after the checkpoint, in log order, stopping at the first unit
// that is torn, stale (wrong LSN) or not chained to its predecessor.
void Store::roll_forward() {
  LogPosition pos = log_.position();
  LogPosition committed = pos;
  std::vector<LogUnit> group;
  uint64_t limit = uint64_t(sb_.nsegments) * sb_.segment_blocks;
  for (uint64_t steps = 0; steps < limit; steps++) {
    uint32_t seg = pos.seg, off = pos.off;
    if (off + 2 > sb_.segment_blocks) {
      if (pos.next_seg >= sb_.nsegments || pos.next_seg == seg) break;
      seg = pos.next_seg;
      off = 0;
    }
    LogUnit u;
    if (!read_unit(*dev_, sb_, seg, off, &u)) break;
    if (u.summary.lsn != pos.lsn || u.summary.prev_crc != pos.prev_crc) break;
    // Free in the checkpoint, but it holds recovered units now.
    sut_.mark_in_use(seg);
    if (u.summary.next_seg < sb_.nsegments) sut_.mark_in_use(u.summary.next_seg);
    pos = LogPosition{seg, u.end_off(), u.summary.next_seg, pos.lsn + 1, u.summary.crc};
    bool end = u.summary.flags & kUnitGroupEnd;
    uint64_t jseq = u.summary.journal_seq;
    group.push_back(std::move(u));
    if (end) {
      apply_group(group);
      stats_.recovered_units += group.size();
      group.clear();
      committed = pos;
      applied_jseq_ = std::max(applied_jseq_, jseq);
    }
  }
  log_.set_position(committed);
  written_jseq_ = written_jseq_snapshot_ = applied_jseq_;
  written_lsn_ = durable_lsn_ = committed.lsn - 1;
  durable_jseq_ = applied_jseq_;
}

void Store::apply_group(const std::vector<LogUnit>& group) {
  for (const LogUnit& u : group) {
    size_t bi = 0;
    for (const SummaryRecord& r : u.summary.records) {
      if (r.kind == RecordKind::InodeFree) {
        const ImapEntry* e = imap_.find(r.ino);
        if (e && e->live) imap_.release(r.ino);
        continue;
      }
      if (r.kind == RecordKind::InodeBlock) {
        uint64_t addr = u.block_addr(sb_, bi);
        for (uint64_t s = 0; s < r.offset && s < kInodesPerBlock; s++) {
          Inode in;
          if (!decode_inode(u.block(bi) + s * kInodeBytes, &in)) continue;
          if (in.ino >= sb_.max_inodes) continue;
          imap_.set(in.ino, ImapEntry{addr, uint16_t(s), true, in.gen});
        }
      }
      bi++;
    }
  }
}

void Store::fail() {
  if (failed_) return;
  failed_ = true;
  if (opts_.read_only) return;
  int err = dev_->last_error();
  report(opts_.backing + ": write failed (" + std::string(err ? std::strerror(err) : "log full") +
         "): volume " + std::to_string(opts_.volume_id) +
         " is read-only until restart; operations not yet on disk stay in the NVRAM journal");
}

void Store::report(const std::string& text) const {
  util::log("fs").warn(text);
}

Status Store::write_failed(uint64_t jseq) {
  const int err = dev_->last_error();
  if (!BlockDevice::is_space_error(err)) {
    fail();
    return Status::Io;
  }
  // The group is held by the device and reads see it; it becomes durable (and its journal
  // sequence with it) only once a retry has written it.
  held_lsn_ = log_.position().lsn - 1;
  held_jseq_ = std::max(held_jseq_, jseq);
  if (!host_full_.exchange(true))
    report(opts_.backing + ": the host filesystem is full: volume " +
           std::to_string(opts_.volume_id) +
           " answers NOSPC to calls that need space, and retries until space returns");
  return Status::NoSpc;
}

bool Store::retry_held() {
  if (!dev_->holds_unwritten()) return true;
  if (!dev_->retry_held()) {
    if (!BlockDevice::is_space_error(dev_->last_error())) fail();
    return false;
  }
  {
    std::lock_guard<std::mutex> g(written_mu_);
    written_lsn_ = std::max(written_lsn_, held_lsn_);
    written_jseq_snapshot_ = std::max(written_jseq_snapshot_, held_jseq_);
  }
  if (host_full_.exchange(false))
    report(opts_.backing + ": space is back on the host: volume " +
           std::to_string(opts_.volume_id) + " writes again");
  return true;
}

Status Store::load(uint64_t ino, CachedInode** out) {
  if (CachedInode* c = cached_inode(ino)) {
    *out = c;
    return Status::Ok;
  }
  const ImapEntry* e = imap_.find(ino);
  if (!e || !e->live) return Status::NoEnt;
  if (e->addr == kNoAddr) return Status::Io;  // live but never written: cannot happen
  if (CacheOnlyReads::active()) return CacheOnlyReads::refuse();
  icache_.count_miss();
  alignas(kBlockSize) uint8_t blk[kBlockSize];
  if (!dev_->read(e->addr, 1, blk)) return Status::Io;
  Inode in;
  if (e->slot >= kInodesPerBlock || !decode_inode(blk + e->slot * kInodeBytes, &in) ||
      in.ino != ino)
    return Status::Io;
  *out = icache_.insert(in);
  return Status::Ok;
}

Status Store::get(InodeId id, CachedInode** out) {
  if (id.ino == 0) return Status::Stale;
  const ImapEntry* e = imap_.find(id.ino);
  if (!e || !e->live || e->gen != id.gen) return Status::Stale;
  return load(id.ino, out);
}

Status Store::allocate(std::optional<InodeId> forced, CachedInode** out) {
  if (failed_) return Status::Io;
  uint64_t ino;
  uint32_t gen;
  if (forced) {
    if (!imap_.claim(forced->ino, forced->gen)) return Status::Exist;
    ino = forced->ino;
    gen = forced->gen;
  } else {
    ino = imap_.allocate(&gen);
    if (ino == 0) return Status::NoSpc;
  }
  icache_.erase(ino);
  Inode in;
  in.ino = ino;
  in.gen = gen;
  CachedInode* c = icache_.insert(in);
  icache_.mark_dirty(c);
  *out = c;
  return Status::Ok;
}

Status Store::release(CachedInode* c) {
  Status st = truncate(c, 0);
  if (st != Status::Ok) return st;
  uint64_t ino = c->inode.ino;
  for (CachedBlock* b : bcache_.range(ino, 0, UINT64_MAX)) bcache_.erase(b);
  pending_blocks_ -= std::min(pending_blocks_, c->pending_blocks);
  const ImapEntry* e = imap_.find(ino);
  if (e && e->addr != kNoAddr) sut_.sub_live(e->addr, kInodeBytes);
  frees_.push_back({ino, c->inode.gen});
  imap_.release(ino);
  icache_.erase(ino);
  return Status::Ok;
}

}  // namespace nasd::fs::lfs
