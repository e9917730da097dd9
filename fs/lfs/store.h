// The storage engine under an LFS volume: inodes and file blocks kept in caches, written to the
// log by flush() as atomic groups, made durable by sync_to() (group commit), summarized by
// checkpoint(), and recovered by roll-forward on open(). It knows nothing of names, directories
// or permissions (that is LfsVolume's job) and is not thread-safe: the volume serializes calls,
// except sync_to()/durable_seq(), which run without the volume lock, and reads made inside a
// CacheOnlyReads scope, which may run at once with each other (never with anything else).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "fs/lfs/block_cache.h"
#include "fs/lfs/block_device.h"
#include "fs/lfs/block_map.h"
#include "fs/lfs/checkpoint.h"
#include "fs/lfs/inode_cache.h"
#include "fs/lfs/inode_map.h"
#include "fs/lfs/log_writer.h"
#include "fs/lfs/options.h"
#include "fs/lfs/segment_table.h"
#include "fs/lfs/snapshot_catalog.h"
#include "fs/volume.h"

namespace nasd::fs::lfs {

struct LogUnit;

Time now_time();

struct StoreStats {
  uint64_t flushes = 0, checkpoints = 0, syncs = 0;
  uint64_t recovered_units = 0;
  uint64_t cleaned_segments = 0, cleaner_blocks_copied = 0, cleaner_passes = 0;
};

// While one of these lives on a thread, the Store calls made on that thread only read what is
// already in memory: one that would read the disk or add to a cache does nothing, fails, and
// marks the scope refused(); the caller then drops whatever that call produced and runs it again
// the ordinary way. Cache hits still move the entry to the MRU end, under a small lock of the
// cache's own. It lets LfsVolume answer reads under a shared lock (readers at once, none of
// which may change a cache's maps) and on a network event-loop thread (which must not wait for
// the disk). An UNSTABLE WRITE attempt on the event loop uses one under the exclusive lock
// (LfsVolume::write_locked): there it may add the blocks it overwrites to the cache, but
// anything that would read the disk refuses. Scopes do not nest.
class CacheOnlyReads {
 public:
  CacheOnlyReads();
  ~CacheOnlyReads();
  CacheOnlyReads(const CacheOnlyReads&) = delete;
  CacheOnlyReads& operator=(const CacheOnlyReads&) = delete;
  bool refused() const;
  // Store side: whether this thread is inside a scope, and the refusal of a call that would
  // have needed the disk (returns the status the refused call answers, Io).
  static bool active();
  static Status refuse();
};

class Store {
 public:
  // Writes an empty volume (superblock + first checkpoint, no inodes).
  static bool format(const LfsOptions& opts, std::string* err);
  // Loads the newest checkpoint and rolls the log forward.
  static std::unique_ptr<Store> open(const LfsOptions& opts, std::string* err);
  ~Store();

  const Superblock& superblock() const { return sb_; }
  const InodeMap& imap() const { return imap_; }
  const SegmentTable& segments() const { return sut_; }
  const StoreStats& stats() const { return stats_; }
  const BlockCache& block_cache() const { return bcache_; }
  const InodeCache& inode_cache() const { return icache_; }
  BlockDevice& device() { return *dev_; }
  // An I/O error (or a refused write) failed a write: the volume is read-only until restart.
  bool failed() const { return failed_; }
  // The host returned ENOSPC for the last log write: it is held in memory (reads see it), calls
  // that need space get NoSpc, and every flush retries it until space returns.
  bool host_full() const { return host_full_.load(); }
  uint64_t held_bytes() const { return dev_->held_bytes(); }
  // A flush found the log without room for the dirty set (admission should make that
  // impossible): calls that need space get NoSpc until a flush fits again. Not a failure.
  bool log_full() const { return log_full_.load(); }
  // Where the next unit will be written.
  const LogPosition& log_head() const { return log_.position(); }

  // --- Inodes ------------------------------------------------------------------------------
  // Stale when `id` does not name a live inode of that generation.
  Status get(InodeId id, CachedInode** out);
  // The live inode `ino` whatever its generation (NoEnt when free).
  Status load(uint64_t ino, CachedInode** out);
  // A fresh inode (ino/gen set, everything else zero). `forced` picks the number (replay).
  Status allocate(std::optional<InodeId> forced, CachedInode** out);
  void mark_dirty(CachedInode* c) { icache_.mark_dirty(c); }
  // Frees the inode's blocks and number; `c` is invalid afterwards.
  Status release(CachedInode* c);

  // --- File blocks -------------------------------------------------------------------------
  // `*data` is nullptr for a hole. Pointers stay valid until the next trim(). With `pin`,
  // a block's buffer is also pinned (*pin, nullptr for a hole): its bytes stay valid and
  // unchanged until BlockPool::unref(*pin) on block_pool(), whatever the cache does meanwhile.
  Status read_block(CachedInode* c, uint64_t lblk, const uint8_t** data,
                    BlockBuffer** pin = nullptr);
  const std::shared_ptr<BlockPool>& block_pool() const { return bcache_.shared_pool(); }
  // Brings the allocated, uncached blocks among [first, first + count) into the cache with one
  // batch of reads (sequential READs would otherwise pay one round trip per block).
  Status prefetch(CachedInode* c, uint64_t first, uint64_t count);
  // A block to modify (read first unless `overwrite_all`); the inode becomes dirty.
  Status modify_block(CachedInode* c, uint64_t lblk, bool overwrite_all, uint8_t** data);
  // A whole-block overwrite without a copy: the block's bytes become `page`, one page of the
  // call record lent to this thread (util::LentPageRun; run->holds_page(page)), which the
  // cache keeps from now on. Otherwise as modify_block(c, lblk, true, ...).
  Status adopt_block(CachedInode* c, uint64_t lblk, uint8_t* page, util::PageRun* run);
  // True when the block has storage (on disk or pending), i.e. writing it allocates nothing.
  Status is_allocated(CachedInode* c, uint64_t lblk, bool* allocated);
  // Drops every block at or beyond the block holding byte `new_size` (and zeroes the tail).
  Status truncate(CachedInode* c, uint64_t new_size);
  uint64_t used_bytes(const CachedInode* c) const {
    return (c->inode.blocks + c->pending_blocks) * kBlockSize;
  }

  // --- Space (store_space.cc) --------------------------------------------------------------
  // Bytes clients may fill; the rest of the device is the log's reserves (below) and the
  // cleaner's slack.
  uint64_t capacity_bytes() const;
  uint64_t used_space_bytes() const;
  // Admission. A call is let in only when the log can take everything the next flush will
  // write once the call is applied (the dirty set, bounded by flush_bound(), plus the call's
  // worst case) and still keep its reserves free:
  //  - checkpoint room: every inode map block, the snapshot table and the catalog, so a
  //    checkpoint always fits after any flush (segments emptied by overwrites and deletes
  //    come back only at a checkpoint, and the cleaner ends every pass with one);
  //  - cleaner room: the copies of a victim's live blocks, so the cleaner can always run and
  //    give segments back (without it a full log could never empty again);
  //  - delete room (left by ordinary calls only): deletes and journal replay may use it, so
  //    they go on when everything else gets NoSpc.
  // A flush of an admitted dirty set therefore never finds the log full (begin_flush checks
  // it again and answers NoSpc, keeping everything in memory, rather than failing the volume).
  enum class Claim {
    Ordinary,  // creates, writes, renames, setattrs: keep every reserve
    Delete,    // remove, rmdir, truncating setattr: may use the delete room
    Replay,    // a journal record replayed after a crash or takeover: it was admitted once;
               // may use the delete room and is not held to capacity_bytes()
  };
  // Admits a call that allocates about `new_blocks` blocks and rewrites `rewritten_blocks`
  // allocated ones (data or directory blocks): NoSpc when the volume is full or the log cannot
  // take it even after a checkpoint and cleaning; otherwise makes the room first.
  Status reserve(uint64_t new_blocks, uint64_t rewritten_blocks = 0, Claim claim = Claim::Ordinary);
  // For calls that allocate nothing (remove, rename, overwrite, setattr): never NoSpc because
  // used space is at capacity, only when the log cannot take the rewrite.
  Status make_log_room(uint64_t rewritten_blocks = 0, Claim claim = Claim::Ordinary) {
    return reserve(0, rewritten_blocks, claim);
  }
  // Cleans up to `max_segments` segments now; returns how many became free. Cached inodes and
  // blocks stay where they are (pointers held by the caller remain valid).
  // Only segments at most `max_utilization` full are worth it (the background cleaner is
  // pickier than a writer that needs space now).
  uint32_t clean(uint32_t max_segments, double max_utilization = 0.98);
  bool needs_cleaning() const;

  // --- Durability --------------------------------------------------------------------------
  // Highest journal_seq applied so far (the next group records it).
  void note_journal_seq(uint64_t seq) { applied_jseq_ = std::max(applied_jseq_, seq); }
  bool has_dirty() const;
  uint64_t dirty_blocks() const { return bcache_.dirty_count(); }
  // Writes all dirty state as one atomic group of units.
  Status flush();
  // flush() in two steps, for a caller that lets the volume go on while the device works
  // (LfsVolume::flush_letting_others_in): begin_flush() builds the group, changes every
  // in-memory pointer and seals the group (exclusive lock held); `*to_write` says whether
  // write_flush() must follow, on the same thread. write_flush() writes the sealed group and
  // records the outcome; it may run without the volume's lock, with readers and writers in:
  //  - the group's data and block-map blocks are the cache's own buffers, each pinned by the
  //    flush until the write completed; a writer that changes one meanwhile writes a copy of it
  //    (CachedBlock::unshare, copy-on-write), which stays dirty and goes to the next group;
  //  - begin_flush() reserves the device's data ring (BlockDevice::reserve_for_log) before the
  //    lock goes, so a read of an address the group has not written yet waits for it;
  //  - the next begin_flush() and checkpoint() wait until the group in flight is written
  //    (wait_for_flight), so groups reach the device in log order, one at a time;
  //  - the group carries the journal sequence of the last operation applied before the seal,
  //    and durable_seq() moves only once write_flush() and a sync_to() are done, so the NVRAM
  //    journal keeps every operation applied after the seal (they are in the next group).
  // write_flush() touches only the sealed group, the log's checksum chain, the device, the
  // pins and the durability counters (under their own mutexes), none of which a caller
  // holding the volume's lock touches while a group is in flight.
  Status begin_flush(bool* to_write);
  Status write_flush();
  // Returns once no group is in flight (see above).
  void wait_for_flight();
  // A cheap answer for a WRITE on the event loop: whether reserve(new_blocks) (or, for 0,
  // make_log_room()) would answer at once without writing, cleaning or checkpointing. nullopt
  // when it would have to; otherwise its answer (RoFs, NoSpc or Ok).
  std::optional<Status> reserve_without_io(uint64_t new_blocks, uint64_t rewritten_blocks) const;
  // Whether block `lblk` of the inode is in the block cache (a partial WRITE of an uncached,
  // allocated block must read it first).
  bool block_cached(const CachedInode* c, uint64_t lblk) {
    return bcache_.find(c->inode.ino, lblk) != nullptr;
  }
  // flush() + imap blocks + checkpoint region, all synced.
  Status checkpoint();
  // LSN of the last unit written (not necessarily durable).
  uint64_t written_lsn() const;
  // Makes everything up to `lsn` durable; concurrent callers share one fdatasync.
  Status sync_to(uint64_t lsn);
  uint64_t durable_seq() const { return durable_jseq_.load(); }
  uint64_t log_bytes_since_checkpoint() const;
  // Evicts clean cached blocks and inodes beyond the budget.
  void trim();

  // --- Walking (fsck, usage recount) --------------------------------------------------------
  // Calls fn(addr, kind, offset) for every block the inode owns: nodes with their key, data
  // with the file block number. Returns the first read error.
  Status for_each_block(CachedInode* c,
                        const std::function<void(uint64_t, RecordKind, uint64_t)>& fn);
  // Recomputes the segment usage table from the inode map and block maps.
  Status recount_usage();
  // Cleaner: if the record's block at `addr` is still live, queue it to be rewritten.
  Status relocate(const SummaryRecord& rec, uint64_t addr, const uint8_t* data, bool* live);

  // --- Snapshots (store_snapshots.cc; see snapshot_catalog.h) ------------------------------
  const SnapshotCatalog& snapshot_catalog() const { return catalog_; }
  uint64_t catalog_addr() const { return catalog_addr_; }
  // Takes snapshot `name` of everything applied so far: one checkpoint whose group also holds
  // the snapshot's table blocks and the new catalog, so a crash leaves either no snapshot or a
  // complete one. Exist when the name is taken, NoSpc when kMaxSnapshots are kept, Inval for a
  // bad name. A format-1 volume is upgraded to format 2 first (one superblock write).
  Status create_snapshot(const std::string& name, int64_t time, SnapshotInfo* out);
  // Forgets snapshot `name` with one checkpoint; the segments only it pinned are reused after
  // that checkpoint is durable. NoEnt when there is no such snapshot.
  Status delete_snapshot(const std::string& name);
  // A read-only store over snapshot `s`, sharing this store's device (its blocks are pinned, so
  // they never change under it). nullptr with `err` when its table cannot be read.
  std::unique_ptr<Store> open_snapshot(const SnapshotInfo& s, std::string* err);
  // Bytes referenced by each snapshot alone (no other snapshot, not the live file system), in
  // catalog order: what deleting it would give back, at block granularity. Walks every
  // snapshot and the live file system (admin use, not per request).
  Status snapshot_exclusive_bytes(std::vector<uint64_t>* out);
  // Calls fn(addr) for every block the state references: inode map blocks, inode blocks, block
  // map nodes and data, and (snapshot stores) the table blocks. An address may repeat (inode
  // blocks hold 16 inodes).
  Status for_each_referenced_block(const std::function<void(uint64_t)>& fn);
  // The table blocks this snapshot store was loaded from (fsck).
  const std::vector<uint64_t>& snapshot_tables() const { return snapshot_tables_; }

 private:
  Store(std::shared_ptr<BlockDevice> dev, const Superblock& sb, const LfsOptions& opts);
  bool load_catalog(uint64_t addr, std::string* err);
  // Marks every segment holding a block of some snapshot as pinned (walks every snapshot).
  Status recompute_pins();
  // Adds the segments a snapshot taken by the checkpoint just written needs (no walk).
  void pin_new_snapshot(const std::vector<uint64_t>& tables);
  Status pin_segments_of(const std::vector<SnapshotInfo>& snaps, std::vector<bool>* pinned);
  // In checkpoint(): writes the pending snapshot's table blocks and the catalog when it changed.
  Status write_snapshot_metadata(int64_t now);
  bool load_checkpoint(std::string* err);
  void roll_forward();
  void apply_group(const std::vector<LogUnit>& group);
  // modify_block() and adopt_block(): `page` (of `run`) null for the former.
  Status change_block(CachedInode* c, uint64_t lblk, bool overwrite_all, uint8_t* page,
                      util::PageRun* run, uint8_t** data);

  // The cache lookups of the read paths: the shared-reader variant inside a CacheOnlyReads scope.
  CachedBlock* cached_block(uint64_t ino, uint64_t key);
  CachedInode* cached_inode(uint64_t ino);
  Status get_node(CachedInode* c, const NodeId& id, bool create, CachedBlock** out);
  Status lookup_addr(CachedInode* c, uint64_t lblk, uint64_t* addr);
  Status set_pointer(CachedInode* c, uint64_t lblk, uint64_t addr, uint64_t* old);
  Status free_subtree(CachedInode* c, const NodeId& id, uint64_t from_rel, bool* now_empty);
  void drop_block_addr(CachedInode* c, uint64_t addr);
  Status walk_node(CachedInode* c, const NodeId& id,
                   const std::function<void(uint64_t, RecordKind, uint64_t)>& fn);
  Status write_inode_group(CachedInode* c, int64_t now);
  // Admission's parts (store_space.cc).
  uint64_t reserve_blocks() const;  // the cleaner's room
  uint64_t checkpoint_room() const;
  uint64_t delete_room() const;
  uint64_t kept_free(Claim claim) const;
  // Worst case of what a call adds to the next flush: its blocks, their block-map nodes, the
  // directory blocks and inodes a namespace change touches.
  static uint64_t call_blocks(uint64_t blocks);
  // Log blocks a group of `blocks` blocks (data and nodes), `inodes` inodes and `records`
  // block-less records takes: with its inode blocks, summaries and the segment tails it skips.
  uint64_t log_blocks_for(uint64_t blocks, uint64_t inodes, uint64_t records) const;
  // Blocks (data and block-map nodes) the next flush writes at most: walks the dirty set
  // (flush_bound) or, cheaply, adds what was dirtied since the last walk (flush_estimate).
  uint64_t flush_bound();
  uint64_t flush_estimate() const;
  // Whether a flush of the dirty set plus `extra` blocks fits with `keep` blocks left over.
  bool log_fits(uint64_t blocks, uint64_t extra, uint64_t keep) const;
  void note_log_full(uint64_t need);
  void fail();
  // After a log write failed: holds it when the host is full (NoSpc), else fails (Io).
  Status write_failed(uint64_t jseq);
  // Writes a held group; false while the host is still full (or once the volume failed).
  bool retry_held();
  void report(const std::string& text) const;

  std::shared_ptr<BlockDevice> dev_;  // shared with the snapshot stores opened from this one
  Superblock sb_;
  LfsOptions opts_;
  InodeMap imap_;
  SegmentTable sut_;
  LogWriter log_;
  BlockCache bcache_;
  InodeCache icache_;
  StoreStats stats_;
  uint64_t cp_seq_ = 0;
  uint64_t pending_blocks_ = 0;  // fresh dirty data blocks, all inodes
  std::vector<std::pair<uint64_t, uint32_t>> frees_;  // InodeFree records for the next group
  uint64_t applied_jseq_ = 0;
  uint64_t written_jseq_ = 0;
  uint64_t flush_jseq_ = 0;   // begin_flush() -> write_flush()
  // The group in flight between begin_flush() and write_flush(): the flushing thread's
  // reservation of the device, and one pin of each cache buffer the group writes from.
  std::mutex flight_mu_;
  std::condition_variable flight_cv_;
  bool in_flight_ = false;  // flight_mu_
  std::unique_lock<std::mutex> flight_reservation_;
  std::vector<BlockBuffer*> flight_pins_;
  int64_t flush_time_ = 0;
  uint64_t cp_blocks_written_ = 0;  // log_.blocks_written() at the last checkpoint
  std::atomic<bool> failed_{false};  // read without the volume lock by write_flush()'s readers
  bool cleaning_ = false;
  // flush_bound()'s last walk: its result and the cache's dirtied() count then.
  uint64_t walked_bound_ = 0;
  uint64_t walked_dirtied_ = 0;
  std::atomic<bool> log_full_{false};  // a flush found no room (should not happen; reported)
  std::atomic<bool> host_full_{false};
  uint64_t held_lsn_ = 0;   // last unit of the held groups
  uint64_t held_jseq_ = 0;  // and the journal sequence they carry
  static constexpr std::chrono::milliseconds kHeldRetryInterval{200};
  std::chrono::steady_clock::time_point last_held_retry_{};

  SnapshotCatalog catalog_;
  uint64_t catalog_addr_ = kNoAddr;
  bool catalog_dirty_ = false;  // rewrite the catalog at the next checkpoint
  bool pins_stale_ = false;     // a snapshot was deleted: recompute all pins after the checkpoint
  bool pin_new_ = false;                 // a snapshot was taken: pin its segments after it
  std::vector<uint64_t> new_tables_;     // ... and its table blocks
  std::optional<SnapshotInfo> pending_snapshot_;  // taken by the next checkpoint
  std::vector<uint64_t> snapshot_tables_;         // snapshot stores only

  mutable std::mutex written_mu_;  // written_lsn_/written_jseq_snapshot_ for sync_to()
  uint64_t written_lsn_ = 0;
  uint64_t written_jseq_snapshot_ = 0;
  std::mutex sync_mu_;
  uint64_t durable_lsn_ = 0;
  std::atomic<uint64_t> durable_jseq_{0};
};

}  // namespace nasd::fs::lfs
