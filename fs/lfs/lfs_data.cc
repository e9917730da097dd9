// LfsVolume: file data (READ and WRITE).
#include <algorithm>
#include <cstring>
#include <optional>

#include <boost/pool/pool_alloc.hpp>

#include "fs/lfs/background.h"
#include "fs/lfs/lfs_volume.h"
#include "util/page_run.h"

namespace nasd::fs::lfs {

static_assert(kBlockSize == util::PageRun::kPageSize, "an adopted page is one block");

namespace {
constexpr uint32_t kMaxTransfer = 64u << 20;  // far above any NFS transfer size

// Calls piece(lblk, in_block, chunk, done) for each block-sized piece of [offset, offset + n),
// in order (`done`: bytes before this piece); stops at and returns the first non-Ok status.
template <class Piece>
Status for_each_block_piece(uint64_t offset, uint64_t n, Piece&& piece) {
  uint64_t pos = offset, done = 0;
  while (done < n) {
    const size_t in_block = pos % kBlockSize;
    const size_t chunk = std::min<uint64_t>(kBlockSize - in_block, n - done);
    if (Status st = piece(pos / kBlockSize, in_block, chunk, done); st != Status::Ok) return st;
    done += chunk;
    pos += chunk;
  }
  return Status::Ok;
}
}  // namespace

Status LfsVolume::read_start(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
                             CachedInode** inode, uint64_t* n, bool* eof,
                             std::optional<Attr>* attr) {
  *n = 0;
  if (Status u = readable(); u != Status::Ok) return u;
  CachedInode* c;
  Status st = store_->get(id, &c);
  if (st != Status::Ok) return st;
  *inode = c;
  if (attr) *attr = attr_of(c);
  if (c->inode.type == FileType::Dir) return Status::IsDir;
  if (c->inode.type != FileType::Reg) return Status::Inval;
  if (!may(ctx.cred, subject_of(c), kWantRead)) return Status::Access;
  uint64_t size = c->inode.size;
  if (offset >= size || count == 0) {
    *eof = offset >= size;
    return Status::Ok;
  }
  *n = std::min<uint64_t>({uint64_t(count), size - offset, kMaxTransfer});
  *eof = offset + *n >= size;
  return Status::Ok;
}

Status LfsVolume::read_locked(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
                              std::vector<uint8_t>* data, bool* eof, std::optional<Attr>* attr) {
  CachedInode* c = nullptr;
  uint64_t n = 0;
  data->clear();
  Status st = read_start(ctx, id, offset, count, &c, &n, eof, attr);
  if (st != Status::Ok || n == 0) return st;
  data->resize(n);
  if ((st = read_range(*store_, c, offset, n, data->data())) != Status::Ok) return st;
  // Changing the inode needs the exclusive lock (read() takes it whenever atime is on).
  // Best effort: only while the log has room for it at once (admission counts on the dirty
  // set growing only through calls it let in).
  if (opts_.atime && !store_->failed() && !store_->host_full() &&
      store_->reserve_without_io(0, 0) == Status::Ok) {
    c->inode.atime = now_time();
    store_->mark_dirty(c);
  }
  if (attr) *attr = attr_of(c);
  return Status::Ok;
}

Status LfsVolume::read_pinned_locked(const OpContext& ctx, InodeId id, uint64_t offset,
                                     uint32_t count, util::ByteSlices* data, bool* eof,
                                     std::optional<Attr>* attr) {
  // Never with atime on: that READ changes the inode (try_read_shared refuses it).
  CachedInode* c = nullptr;
  uint64_t n = 0;
  data->clear();
  Status st = read_start(ctx, id, offset, count, &c, &n, eof, attr);
  if (st != Status::Ok || n == 0) return st;
  uint64_t first_blk = offset / kBlockSize, last_blk = (offset + n - 1) / kBlockSize;
  if ((st = store_->prefetch(c, first_blk, last_blk - first_blk + 1)) != Status::Ok) return st;
  // From a pool of pins objects (Boost.Pool): a READ answered from the cache allocates nothing.
  auto pins = std::allocate_shared<BlockPins>(boost::fast_pool_allocator<BlockPins>(),
                                              store_->block_pool());
  pins->held.reserve(last_blk - first_blk + 1);
  data->parts.reserve(last_blk - first_blk + 1);
  st = for_each_block_piece(offset, n, [&](uint64_t lblk, size_t in_block, size_t chunk,
                                          uint64_t) {
    const uint8_t* blk;
    BlockBuffer* pin;
    if (Status r = store_->read_block(c, lblk, &blk, &pin); r != Status::Ok) return r;
    if (pin) pins->held.push_back(pin);
    data->append(blk ? blk + in_block : util::ByteSlices::zeros(chunk), chunk);
    return Status::Ok;
  });
  if (st != Status::Ok) {
    data->clear();
    return st;  // `pins` lets go of what was pinned so far
  }
  data->owner = std::move(pins);
  return Status::Ok;
}

Status LfsVolume::read_range(Store& s, CachedInode* c, uint64_t offset, uint64_t n, uint8_t* out) {
  uint64_t first_blk = offset / kBlockSize, last_blk = (offset + n - 1) / kBlockSize;
  Status st = s.prefetch(c, first_blk, last_blk - first_blk + 1);
  if (st != Status::Ok) return st;
  return for_each_block_piece(offset, n, [&](uint64_t lblk, size_t in_block, size_t chunk,
                                             uint64_t done) {
    const uint8_t* blk;
    if (Status r = s.read_block(c, lblk, &blk); r != Status::Ok) return r;
    if (blk) std::memcpy(out + done, blk + in_block, chunk);
    else std::memset(out + done, 0, chunk);
    return Status::Ok;
  });
}

Status LfsVolume::write(const OpContext& ctx, InodeId id, uint64_t offset,
                        std::span<const uint8_t> data, Stability stable, Stability* committed,
                        Wcc* wcc) {
  if (in_snapshot_space(id.ino)) return Status::RoFs;
  Lock lk(mu_);
  const Status st = *write_locked(ctx, id, offset, data, stable, committed, wcc, false);
  if (st != Status::Ok) return st;
  // Unstable data without a journal only has to reach the disk eventually; bound how much
  // piles up (a journalled call is bounded in finish()).
  if (stable == Stability::Unstable && !journal_tag()) bound_dirty(lk);
  return finish(lk, Status::Ok, stable != Stability::Unstable);
}

std::optional<Status> LfsVolume::try_write(const OpContext& ctx, InodeId id, uint64_t offset,
                                           std::span<const uint8_t> data, Stability stable,
                                           Stability* committed, Wcc* wcc) {
  if (in_snapshot_space(id.ino)) return std::nullopt;
  const JournalTag* tag = journal_tag();
  // Without a journal a stable WRITE waits for the disk.
  if (stable != Stability::Unstable && !tag) return std::nullopt;
  Lock lk(mu_, std::try_to_lock);
  if (!lk.owns_lock()) return std::nullopt;
  std::optional<Status> st = write_locked(ctx, id, offset, data, stable, committed, wcc, true);
  if (!st || *st != Status::Ok) return st;
  // finish() without its waits: the journal's sequence, and a nudge to the flusher (the
  // attempt refused above the hard mark, where finish() would wait).
  if (tag) store_->note_journal_seq(tag->seq);
  if (worker_ && store_->dirty_blocks() * kBlockSize > soft_dirty_bytes()) worker_->poke();
  return Status::Ok;
}

std::optional<Status> LfsVolume::write_locked(const OpContext& ctx, InodeId id, uint64_t offset,
                                              std::span<const uint8_t> data, Stability stable,
                                              Stability* committed, Wcc* wcc, bool attempt) {
  if (Status u = usable(); u != Status::Ok) return u;
  if (attempt && store_->dirty_blocks() * kBlockSize + data.size() > opts_.cache_bytes / 2)
    return std::nullopt;  // past the hard mark the caller must wait for the flusher
  store_->trim();
  // In an attempt, every Store call below only reads memory; the first one that would need
  // the disk refuses, before anything changed (the checks come first, the changes last).
  std::optional<CacheOnlyReads> cache_only;
  if (attempt) cache_only.emplace();
  auto refused = [&] { return attempt && cache_only->refused(); };
  CachedInode* c;
  Status st = store_->get(id, &c);
  if (refused()) return std::nullopt;
  if (st != Status::Ok) return st;
  PreAttr pre = pre_of(c);
  auto fail = [&](Status s) {
    fill_wcc(wcc, pre, c);
    return s;
  };
  if (c->inode.type == FileType::Dir) return fail(Status::IsDir);
  if (c->inode.type != FileType::Reg) return fail(Status::Inval);
  if (!may(ctx.cred, subject_of(c), kWantWrite)) return fail(Status::Access);
  if (data.size() > kMaxTransfer) return fail(Status::Inval);
  uint64_t end = offset + data.size();
  if (end < offset || end > limits().max_file_size + 1) return fail(Status::FBig);
  *committed = stable == Stability::Unstable ? Stability::Unstable : Stability::FileSync;
  if (data.empty()) return fail(Status::Ok);
  // Only blocks that gain storage count against free space (overwrites reuse the budget).
  uint64_t first = offset / kBlockSize, last = (end - 1) / kBlockSize, fresh = 0;
  for (uint64_t b = first; b <= last; b++) {
    bool allocated;
    st = store_->is_allocated(c, b, &allocated);
    if (refused()) return std::nullopt;
    if (st != Status::Ok) return fail(st);
    fresh += allocated ? 0 : 1;
    // A block written only in part keeps the rest of its old contents: read from the disk
    // unless cached (a new block is zeroes).
    const bool partial = offset > b * kBlockSize || end < (b + 1) * kBlockSize;
    if (attempt && partial && allocated && !store_->block_cached(c, b)) return std::nullopt;
  }
  const uint64_t rewritten = last - first + 1 - fresh;
  if (attempt) {
    std::optional<Status> room = store_->reserve_without_io(fresh, rewritten);
    if (!room) return std::nullopt;
    if (*room != Status::Ok) return fail(*room);
  } else if ((st = store_->reserve(fresh, rewritten, claim())) != Status::Ok) {
    return fail(st);
  }
  // Zero-copy: a whole block whose bytes are a page of the call record lent to this thread
  // becomes the cached block itself (util/page_run.h).
  util::PageRun* lent = util::LentPageRun::current();
  if (lent && !util::PageRun::may_adopt()) lent = nullptr;  // its memory bound: copy
  uint64_t pos = offset, done = 0;
  while (done < data.size()) {
    uint64_t lblk = pos / kBlockSize;
    size_t in_block = pos % kBlockSize;
    size_t chunk = std::min<uint64_t>(kBlockSize - in_block, data.size() - done);
    const uint8_t* src = data.data() + done;
    if (chunk == kBlockSize && lent && lent->holds_page(src)) {
      // const_cast: the lender gave the page away for this (LentPageRun's contract).
      if ((st = store_->adopt_block(c, lblk, const_cast<uint8_t*>(src), lent)) != Status::Ok)
        return fail(st);
      done += chunk;
      pos += chunk;
      continue;
    }
    uint8_t* blk;
    if ((st = store_->modify_block(c, lblk, chunk == kBlockSize, &blk)) != Status::Ok)
      return fail(st);
    std::memcpy(blk + in_block, src, chunk);
    done += chunk;
    pos += chunk;
  }
  Time now = now_time();
  c->inode.size = std::max(c->inode.size, end);
  c->inode.mtime = c->inode.ctime = now;
  store_->mark_dirty(c);
  fill_wcc(wcc, pre, c);
  return Status::Ok;
}

}  // namespace nasd::fs::lfs
