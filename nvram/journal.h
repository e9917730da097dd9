// The NVRAM journal: one region shared by every volume of the node, a circular log of operation
// records, group commit, write-behind trimming, back-pressure and (optionally) a mirror partner.
//
// Life of a record:
//   append()         reserves space (waiting while the log is full), copies the record in and
//                    publishes it; records may finish copying out of order;
//   wait_committed() returns once the record and every record before it are committed: the
//                    commit marker (header tail) covers them, they are msynced in host mode, and
//                    the mirror (if any) acknowledged them. Concurrent waiters share one flush:
//                    the first waiter that finds no flush running commits everything complete;
//   trim()           frees records the file systems report durable (seq <= durable_seq()); the
//                    write-behind thread asks the file systems to flush first.
//
// A volume whose file system cannot absorb records (its flush fails: host disk full, I/O error)
// must not hold back the others. Its records are kept, but once the log fills they are carried
// forward: copied to the tail (same volume and seq, committed and mirrored like any record), so
// the head can pass the originals. While a volume is stuck the others leave a quarter of the log
// free for those copies, and the stuck volume may fill at most half of the log (past that its
// mutations are refused with Jukebox before they touch the fs). A crash between a copy and the
// trim leaves two copies of a seq; recovery keeps one. Known limit: a volume that gets stuck
// while the log is already full cannot be carried until some space frees.
//
// Committing only a complete prefix of the log is what makes acknowledged records survive: a
// crash can leave a half-copied record, but only after every acknowledged one.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "fs/journal_target.h"
#include "nvram/journal_options.h"
#include "nvram/mirror.h"
#include "nvram/record.h"
#include "nvram/records_in_copy.h"
#include "nvram/region.h"
#include "nvram/stats.h"
#include "nvram/unmirrored_gate.h"
#include "util/periodic_worker.h"

namespace nasd::nvram {

class Journal : private Mirror::Listener {
 public:
  // Opens (or creates) the region and scans it; recovered records wait in recovered() until their
  // volume replays them. Mirrors to `mirror` when given, else to a TcpMirror for
  // options.mirror when that is set. Throws std::runtime_error when the region cannot be used
  // (std::invalid_argument for a malformed mirror address).
  static std::shared_ptr<Journal> open(const JournalOptions& options,
                                       std::unique_ptr<Mirror> mirror = nullptr);
  // Stops the background threads and unmaps the region without flushing any file system: to the
  // region this looks like a crash, which it survives. Call shutdown() for a clean stop.
  ~Journal() override;

  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // --- for JournalVolume -------------------------------------------------------------------
  // Makes the volume's file system known to write-behind and trimming. Records of a volume that
  // was never attached are kept (they cannot be trimmed), never dropped.
  void attach(uint32_t volume, std::shared_ptr<fs::JournalTarget> target);
  // Given `target`, only if it is still the one attached (a reopened volume replaced it).
  // Records the file system made durable stay trimmable after the detach. The newer ones
  // join recovered() as if found at open, so that the next opener in this process replays
  // them just as a restart would: a volume abandoned when its lease ran out and opened again
  // here must not lose what it acknowledged since its file system's last flush. The caller
  // has sealed the volume (nothing of it is being appended).
  void detach(uint32_t volume, const fs::JournalTarget* target = nullptr);
  // Runs `hook` on the write-behind thread after `volume`'s file system flushed, before the
  // trim that may drop the volume's records (the latest call wins; detach clears it). For what
  // must outlive the records, as the reply window (JournalVolume::save_window_before_trims).
  // The hook must not wait for this journal (it runs inside its flush).
  void set_before_trim(uint32_t volume, std::function<void()> hook);
  // The volume's records found at open or kept at its detach, in sequence order; dropped by
  // release_recovered(). max_recovered_seq() is the highest seq of the volume ever seen in the
  // log, so that the next opener never reuses a sequence number.
  std::vector<RecordView> recovered(uint32_t volume) const;
  uint64_t max_recovered_seq(uint32_t volume) const;
  void release_recovered(uint32_t volume, uint64_t replayed, uint64_t errors);

  // Largest payload one record may carry.
  uint64_t max_payload() const;
  // Appends one record whose payload is the concatenation of `parts`. On Ok, `*ticket` is what
  // wait_committed() takes. Io when the record can never fit; Jukebox when no space appeared
  // within space_wait (the caller then makes the operation durable some other way).
  fs::Status append(uint32_t volume, uint64_t seq, RecordType type,
                    std::span<const std::span<const uint8_t>> parts, uint64_t* ticket);
  // Whether append() of a `payload`-byte record of `volume` would find room at once, with an
  // eighth of the log to spare: JournalVolume::try_write (the event loop) applies and appends a
  // WRITE only then, so its append() cannot wait unless other volumes fill that margin while
  // the one call runs. Never waits (the journal's mutex is not held across a commit's sync).
  bool has_room_now(uint32_t volume, uint64_t payload) const;
  // Waits until append() of a `payload`-byte record of `volume` would find room without
  // waiting, or until `deadline`, whichever comes first (never longer than space_wait); true
  // when there is room. For a call that must answer by a deadline (fs/call_deadline.h): it
  // asks before it runs, so that it can refuse with nothing changed. Room found here can be
  // taken by another volume's append before this caller's; its append() then waits as usual.
  bool wait_for_room(uint32_t volume, uint64_t payload,
                     std::chrono::steady_clock::time_point deadline);
  // Blocks until the record (and all before it) is committed. Ok, or Jukebox when the mirror is
  // lost and the policy is Fail. A ticket of 0 is trivially committed.
  fs::Status wait_committed(uint64_t ticket);
  // wait_committed() for the event loop, which must not wait: the ticket's status when it is
  // committed already, or when committing it needs no I/O and no other thread (process mode,
  // no mirror, no commit running): the commit -- a store of the commit marker -- then runs
  // here. nullopt when it would wait (an msync, a mirror ack, a commit under way): the caller
  // then uses when_committed(). Never waits (the journal's mutex is not held across a sync).
  std::optional<fs::Status> try_committed(uint64_t ticket);
  // Whether a commit never needs I/O or another node (process mode without a mirror): then
  // wait_committed() waits at most for another thread's in-memory commit.
  bool commits_in_memory() const;
  // The continuation form of wait_committed(): `done` gets its status once the record (and
  // all before it) is committed and mirrored, from the journal's committer thread, which
  // commits as the leader of a group for every such waiter (one sync for all the records
  // complete by then). `done` must not wait for this journal; it is called exactly once, also
  // when the journal stops (the records are committed first, as far as they can be).
  using CommitCallback = std::function<void(fs::Status)>;
  void when_committed(uint64_t ticket, CommitCallback done);

  // Under mirror_policy = continue, records the mirror lacks are acknowledged only once
  // `gate` admits them (unmirrored_gate.h); set before the journal's records are acknowledged
  // to anyone. The end of the complete log, for the gate to know what an earlier run may have
  // acknowledged unmirrored.
  void set_unmirrored_gate(std::shared_ptr<UnmirroredGate> gate);
  uint64_t log_end() const;

  // False while mutations would fail anyway (mirror lost under the Fail policy).
  bool accepts_mutations() const;
  // Also false while `volume` is stuck (its fs cannot absorb records) and the log is half full.
  bool accepts_mutations(uint32_t volume) const;

  // --- write-behind ------------------------------------------------------------------------
  // Asks every attached file system to flush, then trims. One at a time.
  void flush_targets_and_trim();
  // Frees records the file systems already absorbed.
  void trim();

  // Clean stop: flushes every file system, trims, stops the threads.
  void shutdown();

  const JournalOptions& options() const { return options_; }
  JournalStats stats() const;
  // Time from a record's append to its group's commit (the wait of a stable operation).
  const LatencyHistogram& commit_latency() const { return commit_latency_; }
  // Multi-line human readable status for the admin command.
  std::string status() const;

 private:
  Journal(const JournalOptions& options, std::unique_ptr<Region> region,
          std::unique_ptr<Mirror> mirror);
  void recover_from_region();
  uint64_t complete_end_locked() const;
  uint64_t used_locked() const { return reserved_end_ - head_; }
  bool over_threshold_locked() const;
  fs::Status wait_mirror(std::unique_lock<std::mutex>& lk, uint64_t ticket);
  void wait_local_commit_locked(std::unique_lock<std::mutex>& lk, uint64_t ticket);
  void commit_complete();
  void commit_locked(std::unique_lock<std::mutex>& lk);
  // The status a waiter whose record is locally committed gets now; caller holds mu_.
  fs::Status committed_status_locked(uint64_t ticket, fs::Status mirror_lost) const;
  // The committer thread: commits and answers the when_committed() waiters, in ticket order.
  void run_committer();
  // detach(): the volume's highest seq into max_recovered_seq_, and the volume into kept_ when
  // it has records above `durable` (see detach()).
  void keep_for_next_opener(uint32_t volume, uint64_t durable);
  uint64_t count_records(uint64_t from, uint64_t to) const;
  void feed_mirror();
  void declare_degraded_locked(const std::string& why);
  // Reserves `footprint` bytes at the tail when they fit now; the caller copies the record in
  // and then calls finish_copy_locked().
  bool try_reserve_locked(uint64_t footprint, uint64_t* pos);
  uint64_t headroom_locked(uint32_t volume) const;
  void finish_copy_locked(uint64_t pos);
  // Copies the unabsorbed records of stuck volumes near the head to the tail (see above).
  void carry_stuck_records();

  // Mirror::Listener
  MirrorHello mirror_hello() override;
  void mirror_connected(uint64_t resume_pos) override;
  void mirror_acked(uint64_t end_pos) override;
  void mirror_lost(const std::string& why) override;

  const JournalOptions options_;
  std::unique_ptr<Region> region_;
  std::unique_ptr<Mirror> mirror_;
  const uint32_t epoch_;

  mutable std::mutex mu_;
  std::condition_variable commit_cv_;  // commit progress, completed copies, mirror acks
  std::condition_variable space_cv_;   // log space freed
  uint64_t head_ = 0;                  // oldest live record
  uint64_t reserved_end_ = 0;          // where the next record goes
  RecordsInCopy copying_;              // records reserved but not yet completely copied
  uint64_t committed_ = 0;             // commit marker
  bool commit_running_ = false;
  uint64_t live_records_ = 0;
  bool persist_failed_ = false;        // an msync failed: host-mode durability is in doubt

  // Mirror feeding (guarded by mu_).
  std::condition_variable feed_cv_;
  bool mirror_connected_ = false;
  bool degraded_ = false;
  std::shared_ptr<UnmirroredGate> gate_;
  uint64_t mirror_sent_ = 0;
  uint64_t mirror_acked_ = 0;
  uint64_t feed_pin_ = UINT64_MAX;     // trim must not pass a record the feeder is reading
  bool stopping_ = false;
  std::thread feeder_;

  // when_committed() waiters by ticket (guarded by mu_), and the thread that answers them.
  std::multimap<uint64_t, CommitCallback> async_waiters_;
  std::condition_variable committer_cv_;  // a waiter arrived, or stopping
  bool committer_running_ = false;        // guarded by mu_: the thread takes waiters
  std::thread committer_;

  // Volumes (guarded by targets_mu_; never held together with mu_).
  mutable std::mutex targets_mu_;
  std::map<uint32_t, std::shared_ptr<fs::JournalTarget>> targets_;
  std::map<uint32_t, std::function<void()>> before_trim_;  // (guarded by targets_mu_)
  std::map<uint32_t, uint64_t> retired_;  // detached volume -> its durable seq at the detach
  std::map<uint32_t, std::vector<RecordView>> recovered_;
  // Detached volumes with records above their durable seq at the detach (the value), until
  // their next opener releases them: recovered() finds those records wherever they are by
  // then, and the carry moves them forward like a stuck volume's, so that they do not hold
  // back the trim for the volumes still here (away_ holds them for that).
  std::map<uint32_t, uint64_t> kept_;
  std::map<uint32_t, uint64_t> max_recovered_seq_;
  std::set<uint32_t> warned_unattached_;
  std::set<uint32_t> stuck_;       // volumes whose last flush failed (guarded by mu_)
  std::set<uint32_t> away_;        // detached volumes in kept_, until attached (guarded by mu_)
  uint64_t records_carried_ = 0;   // (guarded by mu_)
  // Every record of carried_volumes_ before carried_end_ has a copy at the tail: trim may pass
  // it. (guarded by mu_)
  uint64_t carried_end_ = 0;
  std::set<uint32_t> carried_volumes_;

  std::mutex flush_mu_;  // one flush_targets_and_trim at a time
  mutable std::mutex trim_mu_;   // trims never overlap (recovered() walks the log under it)
  util::PeriodicWorker write_behind_;  // flush the file systems, then trim

  // Counters (guarded by mu_ unless atomic).
  JournalStats counters_;
  LatencyHistogram commit_latency_;
  LatencyHistogram fs_flush_latency_;
  LatencyHistogram space_wait_latency_;
};

}  // namespace nasd::nvram
