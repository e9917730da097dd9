// LfsVolume: lifecycle, shared helpers, attribute calls and durability.
#include "fs/lfs/lfs_volume.h"
#include "util/page_run.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <sstream>

#include "fs/lfs/background.h"

namespace nasd::fs::lfs {

namespace {
constexpr uint32_t kLinkMax = 65000;
constexpr uint32_t kNameMax = 255;
}  // namespace

bool LfsVolume::mkfs(const LfsOptions& opts, std::string* err) {
  if (!Store::format(opts, err)) return false;
  auto store = Store::open(opts, err);
  if (!store) return false;
  CachedInode* root;
  if (store->allocate(InodeId{kRootIno, 1}, &root) != Status::Ok) {
    *err = "cannot allocate the root inode";
    return false;
  }
  Inode& in = root->inode;
  in.type = FileType::Dir;
  in.mode = 0755;
  in.nlink = 2;
  in.parent = kRootIno;
  in.atime = in.mtime = in.ctime = now_time();
  if (Directory(store.get(), root).init() != Status::Ok || store->checkpoint() != Status::Ok) {
    *err = opts.backing + ": cannot write the root directory";
    return false;
  }
  return true;
}

std::unique_ptr<LfsVolume> LfsVolume::open(const LfsOptions& opts, std::string* err) {
  auto store = Store::open(opts, err);
  if (!store) return nullptr;
  const ImapEntry* e = store->imap().find(kRootIno);
  if (!e || !e->live) {
    *err = opts.backing + ": volume has no root directory";
    return nullptr;
  }
  return std::unique_ptr<LfsVolume>(new LfsVolume(std::move(store), opts));
}

std::unique_ptr<LfsVolume> LfsVolume::open_or_create(const LfsOptions& opts, std::string* err) {
  struct stat st;
  if (::stat(opts.backing.c_str(), &st) != 0 || (S_ISREG(st.st_mode) && st.st_size == 0)) {
    if (!mkfs(opts, err)) return nullptr;
  }
  return open(opts, err);
}

LfsVolume::LfsVolume(std::unique_ptr<Store> store, const LfsOptions& opts)
    : store_(std::move(store)), opts_(opts) {
  root_ = InodeId{kRootIno, store_->imap().find(kRootIno)->gen};
  std::random_device rd;
  verifier_ = (uint64_t(rd()) << 32) | rd();
  if (opts_.background_threads) worker_ = std::make_unique<BackgroundWorker>(this);
}

LfsVolume::~LfsVolume() {
  // No checkpoint here: an object dropped without close() behaves like a crash, which recovery
  // handles (and tests rely on).
  worker_.reset();
}

Status LfsVolume::close() {
  worker_.reset();
  Lock lk(mu_);
  store_->wait_for_flight();  // a flush writing with the lock released (flush_letting_others_in)
  if (closed_) return Status::Ok;
  closed_ = true;
  snap_stores_.clear();
  return store_->checkpoint();
}

void LfsVolume::abandon() {
  worker_.reset();
  Lock lk(mu_);
  // Nothing reaches the device once this returns: not even a group another thread's flush
  // is writing with the lock released.
  store_->wait_for_flight();
  closed_ = true;
  snap_stores_.clear();
}

Status LfsVolume::usable() const {
  if (closed_) return Status::Jukebox;
  if (store_->failed()) return Status::RoFs;  // an I/O error made it read-only
  return Status::Ok;
}

Status LfsVolume::readable() const { return closed_ ? Status::Jukebox : Status::Ok; }

VolumeLimits LfsVolume::limits() const {
  VolumeLimits l;
  l.max_file_size = max_file_blocks() * kBlockSize - 1;
  l.block_size = kBlockSize;
  l.link_max = kLinkMax;
  l.name_max = kNameMax;
  l.time_delta = Time{0, 1};
  return l;
}

Attr LfsVolume::attr_of(const CachedInode* c) const {
  const Inode& in = c->inode;
  Attr a;
  a.type = in.type;
  a.mode = in.mode;
  a.nlink = in.nlink;
  a.uid = in.uid;
  a.gid = in.gid;
  a.size = in.size;
  a.used = store_->used_bytes(c);
  a.rdev_major = in.rdev_major;
  a.rdev_minor = in.rdev_minor;
  a.fsid = opts_.volume_id;
  a.fileid = in.ino;
  a.atime = in.atime;
  a.mtime = in.mtime;
  a.ctime = in.ctime;
  return a;
}

PreAttr LfsVolume::pre_of(const CachedInode* c) {
  return PreAttr{c->inode.size, c->inode.mtime, c->inode.ctime};
}

Subject LfsVolume::subject_of(const CachedInode* c) {
  return Subject{c->inode.type, c->inode.mode, c->inode.uid, c->inode.gid};
}

void LfsVolume::fill_wcc(Wcc* wcc, const std::optional<PreAttr>& before,
                         const CachedInode* after) const {
  if (!wcc) return;
  wcc->before = before;
  if (after) wcc->after = attr_of(after);
}

Status LfsVolume::get_dir(InodeId id, CachedInode** out) {
  Status st = store_->get(id, out);
  if (st != Status::Ok) return st;
  return (*out)->inode.type == FileType::Dir ? Status::Ok : Status::NotDir;
}

Status LfsVolume::begin_dir_change(InodeId dir, DirChange* change) {
  if (Status u = usable(); u != Status::Ok) return u;
  store_->trim();
  if (Status st = get_dir(dir, &change->dir); st != Status::Ok) return st;
  change->pre = pre_of(change->dir);
  return Status::Ok;
}

Status LfsVolume::find_new_name(const OpContext& ctx, CachedInode* d, std::string_view name,
                                DirRecord* rec, bool* found) {
  if (name == "." || name == ".." || name == kSnapshotDirName) return Status::Exist;
  if (Status st = check_name(name); st != Status::Ok) return st;
  if (!may(ctx.cred, subject_of(d), kWantWrite | kWantExec)) return Status::Access;
  return Directory(store_.get(), d).lookup(name, rec, found);
}

Status LfsVolume::reply_created(const OpContext& ctx, Lock& lk, CachedInode* c,
                                const DirChange& change, InodeId* out,
                                std::optional<Attr>* obj_attr) {
  // Attributes are sampled under the lock, before finish() may release it to wait for a sync.
  *out = InodeId{c->inode.ino, c->inode.gen};
  if (obj_attr) *obj_attr = attr_of(c);
  return finish(lk, change.reply(Status::Ok), true);
}

Status LfsVolume::check_name(std::string_view name) {
  if (name.empty()) return Status::Inval;
  if (name.size() > kNameMax) return Status::NameTooLong;
  if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos)
    return Status::Inval;
  return Status::Ok;
}

Status LfsVolume::make_durable(Lock& lk) {
  uint64_t lsn = 0;
  Status st = flush_letting_others_in(lk, &lsn);
  if (st != Status::Ok) return st;
  return store_->sync_to(lsn);
}

Status LfsVolume::flush_letting_others_in(Lock& lk, uint64_t* lsn) {
  bool to_write = false;
  Status st = store_->begin_flush(&to_write);
  if (st != Status::Ok || !to_write) {
    *lsn = store_->written_lsn();
    lk.unlock();
    flushed_cv_.notify_all();
    return st;
  }
  // The group is sealed, its blocks pinned and the device reserved (Store::begin_flush): let
  // readers and writers in while the device works. A writer that changes a block of the group
  // writes a copy of it (copy-on-write), which the next group takes. The dirty set is empty
  // now, so writers held back by bound_dirty() may go on.
  lk.unlock();
  flushed_cv_.notify_all();
  st = store_->write_flush();
  *lsn = store_->written_lsn();
  // `lk` is released, and usable for lock() again.
  flushed_cv_.notify_all();
  return st;
}

uint64_t LfsVolume::soft_dirty_bytes() const {
  // Small enough that one background flush keeps writers out only briefly (its device write
  // runs with readers in), large enough that groups stay big.
  return std::min<uint64_t>(opts_.cache_bytes / 16, 32ull << 20);
}

void LfsVolume::bound_dirty(Lock& lk) {
  const uint64_t hard = opts_.cache_bytes / 2;
  auto dirty = [&] { return store_->dirty_blocks() * kBlockSize; };
  if (dirty() <= soft_dirty_bytes()) return;
  if (!worker_) {
    // No background thread: write it out here (no sync) at the hard mark, as before.
    if (dirty() > hard) (void)store_->flush();
    return;
  }
  worker_->poke();
  if (dirty() <= hard) return;
  // Throttle: wait (lock released) for the flusher rather than writing out a whole cache's
  // worth of data here. Bounded: a flusher that cannot write (host full, failed store) must
  // not hold the caller forever; the operation itself is already applied either way.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (dirty() > hard && !closed_ && !store_->failed() && !store_->host_full()) {
    worker_->poke();
    if (flushed_cv_.wait_until(lk, deadline) == std::cv_status::timeout) break;
  }
}

Status LfsVolume::finish(Lock& lk, Status st, bool durable) {
  if (st != Status::Ok) return st;
  if (const JournalTag* tag = journal_tag()) {
    // The NVRAM journal holds this operation; it only needs to reach disk eventually.
    store_->note_journal_seq(tag->seq);
    // Bound what piles up between write-behind passes. The operation itself is done either
    // way: a full host (NoSpc) only delays the write, and an I/O error leaves the volume
    // read-only with this operation safe in the journal.
    bound_dirty(lk);
    return Status::Ok;
  }
  if (!durable) return Status::Ok;
  return make_durable(lk);
}

Status LfsVolume::getattr_locked(InodeId id, Attr* out) {
  if (Status u = readable(); u != Status::Ok) return u;
  CachedInode* c;
  Status st = store_->get(id, &c);
  if (st != Status::Ok) return st;
  *out = attr_of(c);
  return Status::Ok;
}

Status LfsVolume::apply_setattr(const OpContext& ctx, CachedInode* c, const SetAttr& sa) {
  uint32_t new_mode;
  Status st = check_setattr(ctx.cred, subject_of(c), sa, &new_mode);
  if (st != Status::Ok) return st;
  Inode& in = c->inode;
  Time now = now_time();
  if (sa.size) {
    if (*sa.size > limits().max_file_size) return Status::FBig;
    if (*sa.size < in.size) {
      if ((st = store_->truncate(c, *sa.size)) != Status::Ok) return st;
    }
    in.size = *sa.size;
    in.mtime = now;
  }
  in.mode = new_mode;
  if (sa.uid) in.uid = *sa.uid;
  if (sa.gid) in.gid = *sa.gid;
  if (sa.atime_how == TimeHow::ServerTime) in.atime = now;
  if (sa.atime_how == TimeHow::ClientTime) in.atime = sa.atime;
  if (sa.mtime_how == TimeHow::ServerTime) in.mtime = now;
  if (sa.mtime_how == TimeHow::ClientTime) in.mtime = sa.mtime;
  in.ctime = now;
  store_->mark_dirty(c);
  return Status::Ok;
}

Status LfsVolume::setattr(const OpContext& ctx, InodeId id, const SetAttr& sa,
                          std::optional<Time> guard_ctime, Wcc* wcc) {
  if (in_snapshot_space(id.ino)) return Status::RoFs;
  Lock lk(mu_);
  if (Status u = usable(); u != Status::Ok) return u;
  store_->trim();
  CachedInode* c;
  Status st = store_->get(id, &c);
  if (st != Status::Ok) return st;
  PreAttr pre = pre_of(c);
  if (guard_ctime && !(*guard_ctime == c->inode.ctime)) {
    fill_wcc(wcc, pre, c);
    return Status::NotSync;
  }
  // Truncating frees space: it may use the room kept for deletes.
  const bool shrinks = sa.size && *sa.size < c->inode.size;
  st = store_->make_log_room(1, claim(shrinks ? Store::Claim::Delete : Store::Claim::Ordinary));
  if (st != Status::Ok) {
    fill_wcc(wcc, pre, c);
    return st;
  }
  st = apply_setattr(ctx, c, sa);
  fill_wcc(wcc, pre, c);
  return finish(lk, st, true);
}

Status LfsVolume::access_locked(const OpContext& ctx, InodeId id, uint32_t requested,
                                uint32_t* granted, std::optional<Attr>* attr) {
  if (Status u = readable(); u != Status::Ok) return u;
  CachedInode* c;
  Status st = store_->get(id, &c);
  if (st != Status::Ok) return st;
  *granted = access_granted(ctx.cred, subject_of(c), requested);
  if (attr) *attr = attr_of(c);
  return Status::Ok;
}

Status LfsVolume::fsstat_locked(InodeId id, FsStat* out, std::optional<Attr>* attr) {
  if (Status u = readable(); u != Status::Ok) return u;
  CachedInode* c;
  Status st = store_->get(id, &c);
  if (st != Status::Ok) return st;
  uint64_t cap = store_->capacity_bytes(), used = store_->used_space_bytes();
  out->total_bytes = cap;
  out->free_bytes = out->avail_bytes = used < cap ? cap - used : 0;
  uint64_t files = store_->imap().max_inodes() - 1;
  uint64_t live = store_->imap().live_count();
  out->total_files = files;
  out->free_files = out->avail_files = live < files ? files - live : 0;
  out->invarsec = 0;
  if (attr) *attr = attr_of(c);
  return Status::Ok;
}

Status LfsVolume::commit(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
                         Wcc* wcc) {
  if (in_snapshot_space(id.ino)) return Status::RoFs;
  Lock lk(mu_);
  if (Status u = usable(); u != Status::Ok) return u;
  CachedInode* c;
  Status st = store_->get(id, &c);
  if (st != Status::Ok) return st;
  fill_wcc(wcc, pre_of(c), c);
  // COMMIT exists to make UNSTABLE data durable, journal or not.
  return make_durable(lk);
}

Status LfsVolume::flush(uint64_t* durable) {
  Lock lk(mu_);
  if (closed_) return Status::Io;  // nothing more reaches the disk: not durable
  if (Status u = usable(); u != Status::Ok) return u;
  Status st = make_durable(lk);
  if (durable) *durable = store_->durable_seq();
  return st;
}

Status LfsVolume::checkpoint_now() {
  Lock lk(mu_);
  if (Status u = usable(); u != Status::Ok) return u;
  return store_->checkpoint();
}

uint32_t LfsVolume::clean_now(uint32_t segments) {
  Lock lk(mu_);
  if (usable() != Status::Ok) return 0;
  return store_->clean(segments);
}

std::string LfsVolume::status_text() {
  Lock lk(mu_);
  const SegmentTable& sut = store_->segments();
  const StoreStats& s = store_->stats();
  auto rate = [](uint64_t h, uint64_t m) {
    return h + m == 0 ? 0.0 : 100.0 * double(h) / double(h + m);
  };
  std::ostringstream o;
  o << "volume " << opts_.volume_id << " (" << opts_.backing << ")"
    << (store_->failed() ? " FAILED (I/O error; read-only until restart)" : "")
    << (store_->host_full() ? " HOST FULL (calls that need space get NOSPC; retrying)" : "")
    << (store_->log_full() ? " LOG FULL (calls that need space get NOSPC until the cleaner makes room)" : "")
    << "\n";
  if (store_->held_bytes() > 0)
    o << "  held in memory: " << (store_->held_bytes() >> 10)
      << " KiB of log not yet on disk (kept in the NVRAM journal too)\n";
  o << "  segments: " << sut.nsegments() << " total, " << sut.free_count() << " free, "
    << (sut.segment_bytes() >> 10) << " KiB each\n";
  o << "  space: " << (store_->used_space_bytes() >> 20) << " MiB used of "
    << (store_->capacity_bytes() >> 20) << " MiB\n";
  o << "  snapshots: " << store_->snapshot_catalog().snapshots.size() << ", "
    << (sut.snapshot_held_bytes() >> 20) << " MiB held beyond live data in " << sut.pinned_count()
    << " pinned segments" << (opts_.snapshot_schedule.empty() ? "" : ", schedule " + opts_.snapshot_schedule)
    << "\n";
  o << "  inodes: " << store_->imap().live_count() << " live of " << store_->imap().max_inodes()
    << "\n";
  o << "  log: " << s.flushes << " flushes, " << s.syncs << " syncs, " << s.checkpoints
    << " checkpoints, " << s.recovered_units << " units recovered at open\n";
  o << "  cleaner: " << s.cleaner_passes << " passes, " << s.cleaned_segments
    << " segments reclaimed, " << s.cleaner_blocks_copied << " blocks copied\n";
  const BlockCache& bc = store_->block_cache();
  const InodeCache& ic = store_->inode_cache();
  o << "  block cache: " << (bc.bytes() >> 20) << " MiB of " << (bc.budget() >> 20) << " MiB, "
    << bc.dirty_count() << " dirty, hit rate " << rate(bc.hits(), bc.misses()) << "%, "
    << bc.adoptions() << " pages of WRITEs kept without a copy\n";
  o << "  received-WRITE runs (all volumes): " << util::PageRun::adopted_pages()
    << " pages cached from " << (util::PageRun::adopting_bytes() >> 20) << " MiB of runs, "
    << util::PageRun::runs_allocated() << " runs allocated, "
    << (util::PageRun::pooled_bytes() >> 20) << " MiB free in the pool\n";
  o << "  inode cache: " << ic.size() << " inodes, " << ic.dirty_count() << " dirty, hit rate "
    << rate(ic.hits(), ic.misses()) << "%\n";
  o << "  durable journal seq: " << store_->durable_seq() << "\n";
  return o.str();
}

LfsVolume::Report LfsVolume::report() {
  Lock lk(mu_);
  const SegmentTable& sut = store_->segments();
  const StoreStats& s = store_->stats();
  const BlockCache& bc = store_->block_cache();
  Report r;
  r.failed = store_->failed();
  r.capacity_bytes = store_->capacity_bytes();
  r.used_bytes = store_->used_space_bytes();
  r.segments = sut.nsegments();
  r.free_segments = sut.free_count();
  r.segment_bytes = sut.segment_bytes();
  r.live_inodes = store_->imap().live_count();
  r.max_inodes = store_->imap().max_inodes();
  r.log_flushes = s.flushes;
  r.log_syncs = s.syncs;
  r.checkpoints = s.checkpoints;
  r.cleaner_passes = s.cleaner_passes;
  r.cleaned_segments = s.cleaned_segments;
  r.cleaner_blocks_copied = s.cleaner_blocks_copied;
  r.block_cache_bytes = bc.bytes();
  r.block_cache_hits = bc.hits();
  r.block_cache_adoptions = bc.adoptions();
  r.block_cache_misses = bc.misses();
  return r;
}

}  // namespace nasd::fs::lfs
