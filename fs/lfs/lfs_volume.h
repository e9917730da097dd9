// LfsVolume: the Volume (and JournalTarget) backed by a log-structured store in one file or
// block device. NFS semantics live here: names, permissions, link counts, WCC, durability per
// call. One reader/writer lock guards the in-memory state: GETATTR, LOOKUP, ACCESS, READ,
// READLINK, READDIR(PLUS) and FSSTAT of what is cached run under its shared side, at once with
// each other (and, through the try_* attempts, on the network event loop without ever
// waiting); everything else, and a read that needs the disk, takes it exclusively. An UNSTABLE WRITE of cached (or new, or whole) blocks
// is also attempted on the event loop (try_write, exclusive side taken only if free at once).
// A flush builds and seals its group exclusively and writes it to the device with the lock
// released: readers and writers go on meanwhile, a writer changing a block of the group in
// flight changes a copy of it (Store::begin_flush); fdatasync runs outside the lock (group
// commit).
// Dirty data is bounded by back-pressure, not by writers flushing: past a soft mark the
// background thread is asked for a pass, past half the cache writers wait for it.
//
// Wiring:
//   auto opts = fs::lfs::LfsOptions::from_config(*cfg.section("volume", "v0"), cfg, data_dir);
//   std::string err;
//   auto vol = fs::lfs::LfsVolume::open_or_create(opts, &err);   // nullptr + err on failure
//   ... serve; vol->close() (checkpoint) before destruction.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <condition_variable>
#include <string>

#include "fs/lfs/directory.h"
#include "fs/lfs/options.h"
#include "fs/lfs/snapshot_ids.h"
#include "fs/lfs/store.h"
#include "fs/lfs/volume_lock.h"
#include "fs/permission.h"
#include "fs/journal_target.h"
#include "fs/volume.h"

namespace nasd::fs::lfs {

class BackgroundWorker;

class LfsVolume : public JournalTarget {
 public:
  // Formats the backing store (creating a file of opts.size) with an empty root directory.
  static bool mkfs(const LfsOptions& opts, std::string* err);
  // Opens (and recovers) an existing volume.
  static std::unique_ptr<LfsVolume> open(const LfsOptions& opts, std::string* err);
  // open(), or mkfs() + open() when the backing file does not exist yet.
  static std::unique_ptr<LfsVolume> open_or_create(const LfsOptions& opts, std::string* err);
  ~LfsVolume() override;

  // Flushes and writes a checkpoint; the volume refuses calls afterwards (Jukebox: see usable()).
  Status close();
  // Stops background work and refuses calls afterwards (Jukebox), writing nothing more to the
  // backing store: for a shared volume whose lease ran out, which another node may already own.
  void abandon();
  // Human-readable state for the admin interface: segments, cleaner, cache.
  std::string status_text();
  // The same numbers for exporters (metrics, the management page).
  struct Report {
    bool failed = false;
    uint64_t capacity_bytes = 0, used_bytes = 0;
    uint64_t segments = 0, free_segments = 0, segment_bytes = 0;
    uint64_t live_inodes = 0, max_inodes = 0;
    uint64_t log_flushes = 0, log_syncs = 0, checkpoints = 0;
    uint64_t cleaner_passes = 0, cleaned_segments = 0, cleaner_blocks_copied = 0;
    uint64_t block_cache_bytes = 0, block_cache_hits = 0, block_cache_misses = 0;
    uint64_t block_cache_adoptions = 0;  // blocks that became a WRITE's received pages
  };
  Report report();
  // Runs the cleaner now on up to `segments` segments (tests, admin); returns how many freed.
  uint32_t clean_now(uint32_t segments);
  Status checkpoint_now();

  // Snapshots (lfs_snapshots.cc). Clients reach them as `DIR/.snapshot/NAME/...` (read-only,
  // ids per snapshot_ids.h). Taking one needs no journal step: every mutation the journal
  // acknowledged was applied here first (see nvram/journal_volume.h), and the snapshot is a
  // checkpoint of exactly that in-memory state, taken under the volume lock between two calls.
  struct SnapshotListing {
    SnapshotInfo info;
    uint64_t exclusive_bytes = 0;  // given back by deleting it (see Store::snapshot_exclusive_bytes)
  };
  Status snapshot_create(const std::string& name, SnapshotInfo* out);
  Status snapshot_delete(const std::string& name);
  Status snapshot_list(std::vector<SnapshotListing>* out);
  // Space the snapshots keep from the log beyond the live data.
  uint64_t snapshot_held_bytes();
  // Takes and expires the snapshots opts_.snapshot_schedule calls for at `now` (the
  // background worker calls it; tests call it with their own clock). Returns what it did.
  std::string run_snapshot_schedule(int64_t now);
  // The engine underneath, for tests and fsck; callers must not use it concurrently with calls.
  Store& store_for_testing() { return *store_; }

  // Volume
  uint32_t id() const override { return opts_.volume_id; }
  InodeId root() const override { return root_; }
  VolumeLimits limits() const override;
  uint64_t write_verifier() const override { return verifier_; }
  Status getattr(const OpContext& ctx, InodeId id, Attr* out) override;
  Status setattr(const OpContext& ctx, InodeId id, const SetAttr& sa,
                 std::optional<Time> guard_ctime, Wcc* wcc) override;
  Status lookup(const OpContext& ctx, InodeId dir, std::string_view name, InodeId* out,
                std::optional<Attr>* obj_attr, std::optional<Attr>* dir_attr) override;
  Status access(const OpContext& ctx, InodeId id, uint32_t requested, uint32_t* granted,
                std::optional<Attr>* attr) override;
  Status readlink(const OpContext& ctx, InodeId id, std::string* target,
                  std::optional<Attr>* attr) override;
  Status read(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
              std::vector<uint8_t>* data, bool* eof, std::optional<Attr>* attr) override;
  Status write(const OpContext& ctx, InodeId id, uint64_t offset, std::span<const uint8_t> data,
               Stability stable, Stability* committed, Wcc* wcc) override;
  Status create(const OpContext& ctx, InodeId dir, std::string_view name, CreateMode mode,
                const SetAttr& sa, uint64_t verifier, InodeId* out, std::optional<Attr>* obj_attr,
                Wcc* dir_wcc) override;
  Status mkdir(const OpContext& ctx, InodeId dir, std::string_view name, const SetAttr& sa,
               InodeId* out, std::optional<Attr>* obj_attr, Wcc* dir_wcc) override;
  Status symlink(const OpContext& ctx, InodeId dir, std::string_view name,
                 std::string_view target, const SetAttr& sa, InodeId* out,
                 std::optional<Attr>* obj_attr, Wcc* dir_wcc) override;
  Status mknod(const OpContext& ctx, InodeId dir, std::string_view name, FileType type,
               const SetAttr& sa, uint32_t rdev_major, uint32_t rdev_minor, InodeId* out,
               std::optional<Attr>* obj_attr, Wcc* dir_wcc) override;
  Status remove(const OpContext& ctx, InodeId dir, std::string_view name, Wcc* dir_wcc) override;
  Status rmdir(const OpContext& ctx, InodeId dir, std::string_view name, Wcc* dir_wcc) override;
  Status rename(const OpContext& ctx, InodeId from_dir, std::string_view from_name,
                InodeId to_dir, std::string_view to_name, Wcc* from_wcc, Wcc* to_wcc) override;
  Status link(const OpContext& ctx, InodeId file, InodeId dir, std::string_view name,
              std::optional<Attr>* file_attr, Wcc* dir_wcc) override;
  Status readdir(const OpContext& ctx, InodeId dir, uint64_t cookie, uint64_t cookieverf,
                 uint32_t max_entries, bool with_attrs, ReaddirResult* out) override;
  Status fsstat(const OpContext& ctx, InodeId id, FsStat* out, std::optional<Attr>* attr) override;
  Status commit(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
                Wcc* wcc) override;
  // Answered from memory under the shared lock when it is free at once (lfs_read_path.cc);
  // "would block" when it is taken, when the answer needs the disk, for the snapshot name
  // space, and for READ when `atime` is on (that READ changes the inode).
  std::optional<Status> try_getattr(const OpContext& ctx, InodeId id, Attr* out) override;
  std::optional<Status> try_lookup(const OpContext& ctx, InodeId dir, std::string_view name,
                                   InodeId* out, std::optional<Attr>* obj_attr,
                                   std::optional<Attr>* dir_attr) override;
  std::optional<Status> try_access(const OpContext& ctx, InodeId id, uint32_t requested,
                                   uint32_t* granted, std::optional<Attr>* attr) override;
  std::optional<Status> try_read(const OpContext& ctx, InodeId id, uint64_t offset,
                                 uint32_t count, std::vector<uint8_t>* data, bool* eof,
                                 std::optional<Attr>* attr) override;
  // try_read with the data left in the block cache, pinned (read_pinned_locked).
  std::optional<Status> try_read_shared(const OpContext& ctx, InodeId id, uint64_t offset,
                                        uint32_t count, util::ByteSlices* data, bool* eof,
                                        std::optional<Attr>* attr) override;
  // READLINK, READDIR(PLUS) and FSSTAT likewise (not in the snapshot name space).
  std::optional<Status> try_readlink(const OpContext& ctx, InodeId id, std::string* target,
                                     std::optional<Attr>* attr) override;
  std::optional<Status> try_readdir(const OpContext& ctx, InodeId dir, uint64_t cookie,
                                    uint64_t cookieverf, uint32_t max_entries, bool with_attrs,
                                    ReaddirResult* out) override;
  std::optional<Status> try_fsstat(const OpContext& ctx, InodeId id, FsStat* out,
                                   std::optional<Attr>* attr) override;

  // An UNSTABLE WRITE from memory (lfs_data.cc): answered when the exclusive lock is free at
  // once, the inode and the block-map nodes it needs are cached, a partial block is cached or
  // new, the log has room without cleaning, and dirty data is under the soft mark; "would
  // block" (nothing changed) otherwise, and always for FILE_SYNC/DATA_SYNC without a journal.
  std::optional<Status> try_write(const OpContext& ctx, InodeId id, uint64_t offset,
                                  std::span<const uint8_t> data, Stability stable,
                                  Stability* committed, Wcc* wcc) override;

  // JournalTarget
  uint64_t durable_seq() const override { return store_->durable_seq(); }
  Status flush(uint64_t* durable_seq) override;

 private:
  friend class BackgroundWorker;
  using Lock = std::unique_lock<VolumeLock>;
  LfsVolume(std::unique_ptr<Store> store, const LfsOptions& opts);

  // The read path (lfs_read_path.cc). The bodies of GETATTR, LOOKUP, ACCESS, READ, READLINK,
  // READDIR(PLUS) and FSSTAT run with the lock held on either side: under the shared side
  // inside a CacheOnlyReads scope they only read memory; under the exclusive side they may
  // read the disk into the caches. A body may run twice: it sets every output it gives.
  Status getattr_locked(InodeId id, Attr* out);
  Status lookup_locked(const OpContext& ctx, InodeId dir, std::string_view name, InodeId* out,
                       std::optional<Attr>* obj_attr, std::optional<Attr>* dir_attr);
  Status access_locked(const OpContext& ctx, InodeId id, uint32_t requested, uint32_t* granted,
                       std::optional<Attr>* attr);
  Status read_locked(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
                     std::vector<uint8_t>* data, bool* eof, std::optional<Attr>* attr);
  Status readlink_locked(InodeId id, std::string* target, std::optional<Attr>* attr);
  Status readdir_locked(const OpContext& ctx, InodeId dir, uint64_t cookie, uint64_t cookieverf,
                        uint32_t max_entries, bool with_attrs, ReaddirResult* out);
  Status fsstat_locked(InodeId id, FsStat* out, std::optional<Attr>* attr);
  // READ's checks and length: `*n` bytes from `offset` are to be read from `*inode` (0: none;
  // `*eof` is set either way).
  Status read_start(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
                    CachedInode** inode, uint64_t* n, bool* eof, std::optional<Attr>* attr);
  // READ's body without the copy: references to the cached blocks, each pinned, owned by
  // data->owner (a BlockPins); holes refer to static zeroes. Never changes the inode.
  Status read_pinned_locked(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
                            util::ByteSlices* data, bool* eof, std::optional<Attr>* attr);
  // Runs `body` under the shared lock with cache-only reads, and once more under the exclusive
  // lock (trimming the caches first, as every exclusive call does) when it needed the disk.
  template <typename Body>
  Status shared_read(Body body);
  // The same first step for the try_* attempts: nullopt when the lock is not free at once or
  // the body needed the disk.
  template <typename Body>
  std::optional<Status> try_shared_read(Body body);

  // Shared helpers (lfs_volume.cc).
  Attr attr_of(const CachedInode* c) const;
  static PreAttr pre_of(const CachedInode* c);
  static Subject subject_of(const CachedInode* c);
  Status get_dir(InodeId id, CachedInode** out);
  // A call that changes one directory, from its start to its answer: the directory, its
  // attributes before the change, and the caller's WCC, which every answer fills from them,
  // an error's too (RFC 1813): `return change.reply(status)`.
  struct DirChange {
    DirChange(const LfsVolume* volume, Wcc* caller_wcc) : vol(volume), wcc(caller_wcc) {}
    Status reply(Status s) const {
      vol->fill_wcc(wcc, pre, dir);
      return s;
    }
    const LfsVolume* vol;
    Wcc* wcc;
    CachedInode* dir = nullptr;
    PreAttr pre;
  };
  // The start of every call that changes a directory (lock held): the volume is usable, the
  // cache is within budget, `dir` is a live directory; fills `change` with it and its
  // pre-operation attributes.
  Status begin_dir_change(InodeId dir, DirChange* change);
  // The checks of a call that adds `name` to directory `d`, in the order RFC 1813 clients
  // expect (reserved name, name rules, write+search permission), then whether the name is
  // taken: `*found`, with its record in `*rec`.
  Status find_new_name(const OpContext& ctx, CachedInode* d, std::string_view name,
                       DirRecord* rec, bool* found);
  // The reply of a call that made object `c` in the directory of `change`: its id, attributes
  // and the directory's WCC data, after finish() made the change durable (or journalled).
  Status reply_created(const OpContext& ctx, Lock& lk, CachedInode* c, const DirChange& change,
                       InodeId* out, std::optional<Attr>* obj_attr);
  static Status check_name(std::string_view name);
  // Space admission's claim for the running call (Store::Claim): `kind`, except for a
  // replayed journal record, which was admitted once already.
  Store::Claim claim(Store::Claim kind = Store::Claim::Ordinary) const {
    const JournalTag* tag = journal_tag();
    return tag && tag->replay ? Store::Claim::Replay : kind;
  }
  // Finishes a mutation: notes the journal sequence of a journalled call (journal_tag()), or
  // (without a journal) writes the changes and, after dropping the lock, waits until they are
  // durable.
  Status finish(Lock& lk, Status st, bool durable);
  Status make_durable(Lock& lk);
  // Writes every dirty thing as one group (Store::begin_flush/write_flush): the in-memory part
  // under the exclusive lock, the device write with the lock released, readers and writers
  // let in (copy-on-write of the group's blocks). `lk` (exclusive) is released on return;
  // `*lsn` is the last unit written, for sync_to().
  Status flush_letting_others_in(Lock& lk, uint64_t* lsn);
  // Back-pressure on dirty data, at the end of a call that added some (lock held): past the
  // soft mark the background flusher is asked for a pass; past the hard mark (half the cache)
  // the caller waits, lock released, until a flush brought it back under (bounded). Without a
  // background thread the caller flushes itself at the hard mark, as before.
  void bound_dirty(Lock& lk);
  uint64_t soft_dirty_bytes() const;
  // The in-memory part of WRITE shared by write() and try_write() (lock held exclusively):
  // checks, space, cache blocks, attributes. In `attempt` mode it changes nothing and answers
  // nullopt whenever it would read the disk or write, clean or checkpoint to find room.
  std::optional<Status> write_locked(const OpContext& ctx, InodeId id, uint64_t offset,
                                     std::span<const uint8_t> data, Stability stable,
                                     Stability* committed, Wcc* wcc, bool attempt);
  Status apply_setattr(const OpContext& ctx, CachedInode* c, const SetAttr& sa);
  Status new_object(const OpContext& ctx, CachedInode* dir, std::string_view name,
                    FileType type, const SetAttr& sa, CachedInode** out);
  Status drop_link(CachedInode* c);
  Status is_ancestor(uint64_t maybe_ancestor, uint64_t dir, bool* result);
  void fill_wcc(Wcc* wcc, const std::optional<PreAttr>& before, const CachedInode* after) const;
  // Mutations: Jukebox once closed, RoFs once an I/O error failed the store.
  // A closed (or abandoned) volume is one this process no longer serves: a call that reached it
  // anyway was routed here before a hand-over or a failover and ran after the close. Jukebox
  // makes the client ask again, and the router then sends the call to the new owner; Io would
  // reach the application as EIO although nothing failed.
  Status usable() const;
  // Reads: only a closed volume refuses them (a failed one serves what it has).
  Status readable() const;

  // Snapshot name space (lfs_snapshots.cc); each takes the lock itself.
  void trim_all();
  Status snap_store(uint32_t sid, Store** out);  // lock held; Stale for a deleted snapshot
  // Resolves a snapshot-space id to the object it names (lock held). For id 0 (a .snapshot
  // directory) `*c` is the live directory and `*s` the live store.
  Status snap_get(InodeId id, Store** s, CachedInode** c);
  Attr snap_attr(InodeId id, const CachedInode* c);
  Status snap_getattr(InodeId id, Attr* out);
  Status snap_lookup(const OpContext& ctx, InodeId dir, std::string_view name, InodeId* out,
                     std::optional<Attr>* obj_attr, std::optional<Attr>* dir_attr);
  Status snap_access(const OpContext& ctx, InodeId id, uint32_t requested, uint32_t* granted,
                     std::optional<Attr>* attr);
  Status snap_readlink(InodeId id, std::string* target, std::optional<Attr>* attr);
  Status snap_read(const OpContext& ctx, InodeId id, uint64_t offset, uint32_t count,
                   std::vector<uint8_t>* data, bool* eof, std::optional<Attr>* attr);
  Status snap_readdir(const OpContext& ctx, InodeId dir, uint64_t cookie, uint64_t cookieverf,
                      uint32_t max_entries, bool with_attrs, ReaddirResult* out);
  Status snap_fsstat(const OpContext& ctx, InodeId id, FsStat* out, std::optional<Attr>* attr);
  // Copies [offset, offset + n) of regular file `c` in `s` into `out` (shared by READ).
  static Status read_range(Store& s, CachedInode* c, uint64_t offset, uint64_t n, uint8_t* out);

  std::unique_ptr<Store> store_;
  LfsOptions opts_;
  InodeId root_;
  uint64_t verifier_;
  mutable VolumeLock mu_;
  // Signalled whenever a flush took dirty blocks out of the cache's dirty set (writers held
  // back by bound_dirty() wait on it with mu_ released).
  std::condition_variable_any flushed_cv_;
  bool closed_ = false;
  std::map<uint32_t, std::unique_ptr<Store>> snap_stores_;  // open snapshots, by id
  std::unique_ptr<BackgroundWorker> worker_;
};

}  // namespace nasd::fs::lfs
