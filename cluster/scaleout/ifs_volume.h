// scaleout::IfsVolume: the scale-out file system (`/r/ifs`), one volume striped with N+M
// erasure coding over the drives of every node of the cluster. It is the fs::JournalTarget
// under the coordinator's NVRAM journal, exactly where an LFS sits under a node's own volumes.
//
// Roles. One node at a time coordinates the volume (the node that serves it, under its lease,
// like any volume of the cluster); every other node forwards its calls there over the
// interconnect (the ordinary router). The coordinator orders every metadata change and write
// of every inode; per-inode coordination spread over nodes is not built (see README.md).
//
// Write path and durability:
//   1. a mutation runs here in memory (namespace, catalog, the file's dirty slots) as a
//      journal record; the journal acknowledges a stable write once the record is in this
//      node's NVRAM and its mirror (nvram/journal_volume.h), as for every other volume;
//   2. flush() (the journal's write-behind) writes the dirty slots as protection groups, N
//      data + M parity units of 128 KiB on distinct drives of many nodes, in parallel
//      (GroupIo), syncs the drives, and only then writes the metadata checkpoint, the namespace
//      and catalog as they were when the flush began (ifs_image.h: mirrored to every node);
//   3. durable_seq() moves to that snapshot's sequence; the journal then trims the records.
//   Units superseded by a flush, a truncate, a remove or a re-protect are deleted only once a
//   checkpoint that no longer references them has landed (never before: a crash between would
//   leave the checkpoint pointing at deleted units).
// Failover: a survivor that takes the volume over (from the dead coordinator's mirrored NVRAM)
// opens it here from the newest checkpoint on any majority of nodes, and the journal replays
// the records after it. Nothing of the volume lives on a shared disk.
//
// Reads come from the dirty slots, then a small cache of decoded slots, then the groups'
// units on their nodes; GroupIo rebuilds missing or corrupt units from parity on the fly.
// Other nodes read without passing the bytes through here: read_layout() tells them where a
// READ's bytes are (read_layout.h) and they read the units from their holders themselves.
//
// Protection: a background thread watches the topology (IfsCluster). When a node or drive is
// lost, or groups are found below full protection, it runs a re-protect pass
// (ProtectionJob + GroupIo::repair_group); when a node joins (or returns), groups spread
// unevenly are rebalanced onto it (GroupIo::rebalance_group, every moved group re-striped
// under a fresh version); a scrub on request reads every unit and repairs bad ones in place.
// Each commit goes into the catalog, and a checkpoint holds it before the old units are
// dropped, so a coordinator killed mid-pass loses nothing (the next one opens the older or
// the newer record, both complete) and its successor's pass picks the job up again.
// group_status() reports groups' health and the pass's progress (for nasd-admin).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "cluster/scaleout/group_io.h"
#include "cluster/scaleout/ifs_cluster.h"
#include "cluster/scaleout/ifs_options.h"
#include "cluster/scaleout/ifs_state.h"
#include "cluster/scaleout/orphan_sweep.h"
#include "cluster/scaleout/protection_job.h"
#include "cluster/scaleout/protection_status.h"
#include "cluster/scaleout/read_layout.h"
#include "fs/journal_target.h"

namespace nasd::scaleout {

// The volume-wide summary `nasd-admin volumes` prints (per-group detail: group_status()).
struct IfsHealth {
  uint64_t files = 0;
  uint64_t groups = 0;
  uint64_t groups_degraded = 0;       // not at full protection on the current topology
  uint64_t groups_unreadable = 0;     // more than M units on dead nodes or failed drives
  uint64_t groups_misshaped = 0;      // full, but not their file's policy's shape (restripe due)
  int nodes = 0, nodes_alive = 0;
  int drives = 0, drives_healthy = 0;
  uint64_t passes = 0;                // re-protect passes run since open
  JobProgress job;                    // the running (or last) pass
  uint64_t checkpoint_generation = 0;
  uint64_t durable_seq = 0;
  uint64_t dirty_bytes = 0;           // written, not yet striped (held by NVRAM meanwhile)
  SweepProgress sweep;                // the orphan sweeps (orphan_sweep.h)
  std::string text() const;           // the lines nasd-admin prints
};

class IfsVolume : public fs::JournalTarget {
 public:
  // Opens the volume from the newest checkpoint (a new volume when a majority of nodes hold
  // none). nullptr and *error when too few nodes answer or the metadata is damaged.
  static std::unique_ptr<IfsVolume> open(const IfsOptions& options, IfsCluster* cluster,
                                         std::string* error);
  ~IfsVolume() override;  // stops the protection thread; writes nothing

  // A clean close: flush (data and checkpoint); the protection thread stops. Idempotent.
  fs::Status close();
  // The lease is lost: stop, write nothing more.
  void abandon();

  // Starts the protection thread; the node calls it once the journal's replay is done (a pass
  // during the replay would compete with it for the drives and checkpoint half-replayed state).
  void start_protection();
  IfsHealth health();
  // Every group's health and the protection pass's progress, as `nasd-admin protection` shows
  // it (cluster/scaleout/protection_status.h); at most `max_listed` groups listed.
  ProtectionStatus group_status(size_t max_listed);
  // Runs one protection pass now (tests, the admin's "repair now"); returns when it ended.
  void reprotect_now();
  // Asks the protection thread for a scrub (OneFS MediaScan): every unit of every group read,
  // its checksum verified, and a bad or missing one rebuilt from the group's others; the
  // pass also does whatever re-protect and rebalance are due. Returns at once; progress in
  // group_status(). scrub_now() runs it on the calling thread (tests).
  void start_scrub();
  void scrub_now();
  // The orphan sweep (orphan_sweep.h): every usable drive's keys listed through the unit
  // service, the units no record names and no writer can still record deleted. Runs on the
  // protection thread every sweep interval (and here, on the calling thread, for tests); never
  // during a protection pass (both hold pass_mu_). Starts with a checkpoint: without one
  // landing it does nothing. Returns the sweep's progress.
  SweepProgress sweep_now();
  // Default 10 minutes; 0 turns the periodic sweep off. Before start_protection().
  void set_sweep_interval(std::chrono::milliseconds every) { sweep_every_ = every; }
  // Per-directory protection (ifs_policy.h; `nasd-admin protection set|clear|get`).
  // Sets (or with nullopt clears) the policy of the directory at `path` ("/" is the volume's
  // root), refused when the cluster's members cannot honour it. Durable before it returns:
  // the change is checkpointed with the rest of the metadata (the journal carries only
  // client calls; the checkpoint is mirrored to every node, what a failover opens). Files
  // written under it from then on are planned with it; the protection thread is woken to
  // re-lay the groups written before (JobKind::Restripe). False and *message says why.
  bool set_directory_policy(std::string_view path, std::optional<ProtectionPolicy> policy,
                            std::string* message);
  // The effective policy of `path` and where it comes from (the directory or file itself,
  // the directory it inherits from, or the volume default), and how many groups of the
  // volume still wait for their restripe.
  bool directory_policy(std::string_view path, std::string* text);
  // The group catalog as nasd-fsck --scaleout reads it (catalog_text.h), taken now.
  std::string catalog_text();
  // A protection pass checkpoints its commits at least every `commits` commits (default 256;
  // tests lower it to see a pass cut short between checkpoints). Before start_protection().
  void set_pass_checkpoint_batch(size_t commits) { pass_checkpoint_batch_ = commits ? commits : 1; }
  // Every group of every file: its health (fsck): unreadable units and parity mismatches.
  struct FsckReport {
    uint64_t groups = 0, bad_parity = 0, unreadable = 0, lost = 0;
  };
  FsckReport fsck();

  // Where the bytes of a READ are right now (read_layout.h): the same checks and answer as
  // read(), but clean slots as their group records instead of bytes, dirty ones inline.
  // Never waits for a drive. Jukebox once the volume is closed or abandoned.
  fs::Status read_layout(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                         uint32_t count, ReadLayout* out);

  // --- JournalTarget
  uint64_t durable_seq() const override;
  fs::Status flush(uint64_t* durable_seq) override;

  uint32_t id() const override { return options_.volume_id; }
  fs::InodeId root() const override { return {kIfsRootIno, 1}; }
  fs::VolumeLimits limits() const override;
  uint64_t write_verifier() const override { return verifier_; }

  fs::Status getattr(const fs::OpContext& ctx, fs::InodeId id, fs::Attr* out) override;
  fs::Status setattr(const fs::OpContext& ctx, fs::InodeId id, const fs::SetAttr& sa,
                     std::optional<fs::Time> guard_ctime, fs::Wcc* wcc) override;
  fs::Status lookup(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                    fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                    std::optional<fs::Attr>* dir_attr) override;
  fs::Status access(const fs::OpContext& ctx, fs::InodeId id, uint32_t requested,
                    uint32_t* granted, std::optional<fs::Attr>* attr) override;
  fs::Status readlink(const fs::OpContext& ctx, fs::InodeId id, std::string* target,
                      std::optional<fs::Attr>* attr) override;
  fs::Status read(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset, uint32_t count,
                  std::vector<uint8_t>* data, bool* eof, std::optional<fs::Attr>* attr) override;
  fs::Status write(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset,
                   std::span<const uint8_t> data, fs::Stability stable,
                   fs::Stability* committed, fs::Wcc* wcc) override;
  fs::Status create(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                    fs::CreateMode mode, const fs::SetAttr& sa, uint64_t verifier,
                    fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                    fs::Wcc* dir_wcc) override;
  fs::Status mkdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                   const fs::SetAttr& sa, fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                   fs::Wcc* dir_wcc) override;
  fs::Status symlink(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                     std::string_view target, const fs::SetAttr& sa, fs::InodeId* out,
                     std::optional<fs::Attr>* obj_attr, fs::Wcc* dir_wcc) override;
  fs::Status mknod(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                   fs::FileType type, const fs::SetAttr& sa, uint32_t rdev_major,
                   uint32_t rdev_minor, fs::InodeId* out, std::optional<fs::Attr>* obj_attr,
                   fs::Wcc* dir_wcc) override;
  fs::Status remove(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                    fs::Wcc* dir_wcc) override;
  fs::Status rmdir(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                   fs::Wcc* dir_wcc) override;
  fs::Status rename(const fs::OpContext& ctx, fs::InodeId from_dir, std::string_view from_name,
                    fs::InodeId to_dir, std::string_view to_name, fs::Wcc* from_wcc,
                    fs::Wcc* to_wcc) override;
  fs::Status link(const fs::OpContext& ctx, fs::InodeId file, fs::InodeId dir,
                  std::string_view name, std::optional<fs::Attr>* file_attr,
                  fs::Wcc* dir_wcc) override;
  fs::Status readdir(const fs::OpContext& ctx, fs::InodeId dir, uint64_t cookie,
                     uint64_t cookieverf, uint32_t max_entries, bool with_attrs,
                     fs::ReaddirResult* out) override;
  fs::Status fsstat(const fs::OpContext& ctx, fs::InodeId id, fs::FsStat* out,
                    std::optional<fs::Attr>* attr) override;
  fs::Status commit(const fs::OpContext& ctx, fs::InodeId id, uint64_t offset, uint32_t count,
                    fs::Wcc* wcc) override;

 private:
  IfsVolume(IfsOptions options, IfsCluster* cluster, IfsState state, uint64_t generation);
  // Every group record of every file (the catalog), copied; the caller holds mu_.
  std::vector<GroupRecord> catalog_locked() const;
  // The protection job configuration: the volume's policy and every file's that differs (from
  // a directory's policy); the caller holds mu_.
  JobConfig job_config_locked() const;

  using SlotKey = std::pair<uint64_t, uint64_t>;  // (ino, slot)
  // A slot's authoritative bytes since it was last written: shorter than kSlotBytes means
  // zeros after; the file's size decides how much of it is the file's.
  using SlotBytes = std::shared_ptr<std::vector<uint8_t>>;
  struct Garbage {
    std::vector<UnitRef> units;
    uint64_t snapshot;  // deletable once a checkpoint of a later snapshot has landed
  };
  static constexpr size_t kCacheSlots = 48;
  static constexpr uint32_t kNameMax = 255;
  static constexpr uint32_t kChangeEntries = 2 | 1;  // write + search (fs::kWantWrite | kWantExec)

  // ifs_volume.cc (namespace; all with mu_ held)
  IfsInode* find(fs::InodeId id);
  fs::Status find_dir(fs::InodeId id, IfsInode** out);
  fs::Status find_dir_for_change(fs::InodeId id, fs::Wcc* wcc, IfsInode** out);
  bool allowed(const fs::Cred& cred, const IfsInode& n, uint32_t rwx) const;
  static fs::PreAttr pre(const IfsInode& n);
  static fs::Time now();
  void touch(IfsInode& n, bool data_changed);
  void note_applied();
  fs::Status check_new_name(const fs::OpContext& ctx, IfsInode& dir, std::string_view name);
  fs::Status add_entry(const fs::OpContext& ctx, fs::InodeId dir, std::string_view name,
                       fs::FileType type, const fs::SetAttr& sa, fs::InodeId* out,
                       fs::Wcc* dir_wcc, IfsInode** made);
  static void link_name(IfsInode& dir, std::string_view name, uint64_t ino);
  static void unlink_name(IfsInode& dir, std::string_view name);
  static uint64_t child(const IfsInode& dir, std::string_view name);  // 0 when absent
  void drop_link(uint64_t ino);

  // ifs_data.cc
  SlotBytes dirty_slot(std::unique_lock<std::mutex>& lk, uint64_t ino, uint64_t slot, bool need_old);
  bool load_slot(std::unique_lock<std::mutex>& lk, uint64_t ino, uint64_t slot,
                 std::vector<uint8_t>* out);
  void resize_file(std::unique_lock<std::mutex>& lk, IfsInode& n, uint64_t ino, uint64_t size);
  void forget_file(uint64_t ino, IfsInode& n);
  void throw_away(const GroupRecord& r, uint64_t snapshot);
  void throw_away(const GroupRecord& r) { throw_away(r, snapshots_); }
  void cache_drop(uint64_t ino, uint64_t slot);
  void delete_garbage(uint64_t durable_snapshot);

  // ifs_protect.cc
  void protect_loop();
  // One pass of the protection job over the catalog: re-protect and rebalance as the
  // topology calls for, and with `scrub` every group read and verified.
  void run_pass(const Topology& topology, bool scrub = false);
  // ifs_sweep.cc: the fence and the referenced units, in one step under mu_.
  void sweep_snapshot(SweepFence* fence, std::vector<UnitRef>* referenced);
  // Groups below full protection or spread unevenly on `topology` (a pass is due).
  bool pass_due(const Topology& topology);

  const IfsOptions options_;
  IfsCluster* const cluster_;
  GroupIo io_;
  const uint64_t verifier_;

  mutable std::mutex mu_;
  IfsState live_;                                 // guarded by mu_
  std::map<SlotKey, SlotBytes> dirty_;            // guarded by mu_
  std::map<SlotKey, SlotBytes> flushing_;         // guarded by mu_: being written by flush()
  std::map<SlotKey, SlotBytes> cache_;            // guarded by mu_: decoded slots, read only
  std::list<SlotKey> cache_order_;                // guarded by mu_: most recent first
  std::vector<Garbage> garbage_;                  // guarded by mu_
  uint64_t snapshots_ = 0;                        // guarded by mu_: flush snapshots taken
  // guarded by mu_: the first client-version counter of the write-behind in flight (its
  // groups are written but not recorded yet); none between flushes. The sweep's floor.
  std::optional<uint64_t> flush_floor_;
  std::atomic<uint64_t> durable_seq_{0};
  uint64_t generation_ = 0;                       // guarded by flush_mu_: checkpoint written
  std::mutex flush_mu_;                           // one flush at a time

  std::mutex status_mu_;
  JobProgress job_progress_;                      // guarded by status_mu_
  uint64_t passes_ = 0;                           // guarded by status_mu_
  std::mutex pass_mu_;                            // one protection pass at a time
  size_t pass_checkpoint_batch_ = 256;
  std::chrono::milliseconds sweep_every_{600000};
  SweepProgress sweep_progress_;                  // guarded by status_mu_

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;                         // guarded by stop_mu_
  bool scrub_requested_ = false;                  // guarded by stop_mu_
  bool restripe_requested_ = false;               // guarded by stop_mu_: a policy changed
  std::atomic<bool> closed_{false};
  std::atomic<bool> abandoned_{false};
  bool meta_changed_ = false;                     // guarded by mu_: catalog changed by a pass
  std::thread protector_;
};

}  // namespace nasd::scaleout
