// The protection jobs of a scale-out volume (OneFS: FlexProtect, MediaScan), as a pure state
// machine run by the volume's coordinator: no threads, I/O or clocks of its own. A driver feeds
// it events (topology changes, client writes, task results, time) and carries out its actions
// (run a task on a worker node, persist a commit, delete units no longer referenced).
// Tested by a deterministic simulation with random faults (tests/cluster/scaleout/
// protection_job_simulation_test.cc).
//
// The catalog is the coordinator's metadata about groups: for each extent (file, offset) the
// GroupRecord that holds its bytes. It is persisted by the driver (the coordinator's journal
// and its mirror) on every Commit, so a coordinator that fails over rebuilds the machine from
// the catalog with a higher epoch and simply starts again.
//
// Jobs:
//   Reprotect  starts by itself when a topology change leaves groups with units on a dead node
//              or failed drive, or under-protected where the topology now allows better. A task
//              rebuilds the group's lost units elsewhere (GroupIo::repair_group), re-striping it
//              narrower when the survivors cannot hold its width at full protection.
//   Scrub      on request: every group is read, every checksum verified, bad units rebuilt.
//   Rebalance  (OneFS: AutoBalance) starts by itself when groups at full protection spread
//              unevenly over the usable nodes (rebalance_units in layout.h): above all when a
//              node is added, which holds nothing yet, and when a node comes back after
//              re-protect moved its share away. A task re-stripes the group onto balanced
//              places under a fresh version (every unit written anew, never an existing key),
//              and the old units are dropped only after the commit, so the group keeps its
//              full protection throughout. A rebalance task also verifies every unit it reads
//              (it does a scrub's work), so it replaces a queued scrub of the same group.
//   Restripe   (OneFS: SetProtectPlus) starts by itself when a group at full protection has a
//              shape its file's policy no longer asks for (JobConfig::file_policy: a directory's
//              policy was set or cleared, or the file was renamed under another one): other
//              parity, another b, or wider than a fixed N. A task re-lays the group's bytes
//              under the file's policy (GroupIo::restripe_group: one or more groups, every unit
//              under the task's fresh versions) and the old units are dropped only after the
//              commit, so the group keeps its old protection until the new one is in place.
//              Groups narrower than the policy allows are not widened (as for re-protect).
//              Re-protect goes before restripe, restripe before rebalance, rebalance before
//              scrub.
//
// Safety invariants (what the simulation checks):
//   * a Commit only ever replaces the version a task started from: a task whose group was
//     rewritten by a client, reassigned after a timeout, or issued by an earlier epoch is
//     stale, and its results are dropped (DropUnits), never committed;
//   * DropUnits never names a unit the catalog points at (same key and place);
//   * new versions are unique across epochs: epoch << 40 | counter;
//   * a rebalance commit is accepted only for records entirely in the task's own fresh
//     versions, at full protection and balanced on the current topology;
//   * a restripe commit only for records entirely in the task's own fresh versions, at full
//     protection and in the shape of the file's policy.
// Liveness: once faults stop, every group whose units can be rebuilt ends fully protected and
// the job becomes idle; a group that fails kMaxAttempts times is reported unrecoverable until
// the topology changes again.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster/scaleout/group_record.h"

namespace nasd::scaleout {

enum class JobKind : uint8_t { Reprotect = 1, Scrub = 2, Rebalance = 3, Restripe = 4 };
const char* job_kind_name(JobKind k);

struct JobConfig {
  ProtectionPolicy policy;  // the volume's default
  // Files whose policy is not the default (inherited from a directory: ifs_policy.h).
  std::map<uint64_t, ProtectionPolicy> file_policy;
  const ProtectionPolicy& policy_for(uint64_t file) const {
    auto it = file_policy.find(file);
    return it == file_policy.end() ? policy : it->second;
  }
  int max_tasks_per_node = 2;
  int64_t task_timeout_ms = 10000;
};

struct ExtentId {
  uint64_t file = 0;
  uint64_t offset = 0;
  bool operator<(const ExtentId& o) const {
    return file != o.file ? file < o.file : offset < o.offset;
  }
  bool operator==(const ExtentId& o) const { return file == o.file && offset == o.offset; }
};

constexpr uint64_t kVersionsPerTask = 64;  // re-striping yields at most kMaxData pieces
constexpr int kMaxAttempts = 3;

struct JobTask {
  uint64_t id = 0;  // epoch << 32 | sequence
  JobKind kind = JobKind::Reprotect;
  uint32_t worker = 0;
  GroupRecord record;              // the version the work starts from
  uint64_t first_new_version = 0;  // [first, first + kVersionsPerTask) are the task's to use
  ProtectionPolicy policy;         // the file's policy (re-striping plans with it)
};

struct UnitRef {
  UnitPlace place;
  UnitKey key;
};

struct JobAction {
  enum class Kind {
    Assign,     // run `task` on task.worker; report with task_done
    Commit,     // persist: `extent` is now held by `records` (replacing the previous record)
    DropUnits,  // delete `units` (best effort; they are referenced by nothing)
  };
  Kind kind = Kind::Assign;
  JobTask task;
  ExtentId extent;
  std::vector<GroupRecord> records;
  std::vector<UnitRef> units;
};

struct TaskResult {
  uint64_t task = 0;
  bool ok = false;
  std::vector<GroupRecord> replacement;  // ok: the records now holding the extent's bytes
  int units_rebuilt = 0;
  std::string error;
};

struct JobProgress {
  bool running = false;
  JobKind kind = JobKind::Reprotect;  // the job of the current run (Reprotect wins, then
                                      // Rebalance)
  uint64_t total = 0;          // groups taken into the current run
  uint64_t done = 0;           // ... finished
  uint64_t inflight = 0;
  uint64_t unrecoverable = 0;  // groups given up until the topology changes
  uint64_t units_rebuilt = 0;
  uint64_t groups_degraded = 0;  // catalog groups not at full protection now
  uint64_t groups_unbalanced = 0;  // catalog groups at full protection, spread unevenly
  uint64_t groups = 0;             // catalog groups
  uint64_t groups_moved = 0;       // rebalance commits in the current run
  uint64_t groups_misshaped = 0;   // catalog groups at full protection in a shape their
                                   // file's policy no longer asks for (restripe due)
  uint64_t groups_restriped = 0;   // restripe commits in the current run
};

class ProtectionJob {
 public:
  ProtectionJob(JobConfig config, uint32_t epoch, const Topology& topology);

  // ---- events ----
  void load(const std::vector<GroupRecord>& records);
  void topology_changed(int64_t now_ms, const Topology& topology);
  void start_scrub(int64_t now_ms);
  // A client write (ordered by the coordinator) replaced the extent's record.
  void group_written(int64_t now_ms, const GroupRecord& record);
  void task_done(int64_t now_ms, const TaskResult& result);
  void tick(int64_t now_ms);
  // Versions for a client write's new group (unique across epochs).
  uint64_t allocate_versions(uint64_t n);

  std::vector<JobAction> take_actions();

  // ---- queries ----
  JobProgress progress() const;
  const std::map<ExtentId, GroupRecord>& catalog() const { return catalog_; }
  const Topology& topology() const { return topology_; }
  // At full protection on the current topology: every unit on a usable place, and the shape
  // not under-protected unless the topology allows no better.
  bool fully_protected(const GroupRecord& r) const;
  // Fully protected and in the shape its file's policy asks for on the current topology:
  // the policy's parity and b (unless the topology allows no better) and no wider than a
  // fixed N. Narrower than the policy allows counts as shaped (nothing merges groups).
  bool shaped(const GroupRecord& r) const;
  // Fully protected and spread as evenly as the topology allows (no rebalance to do).
  bool balanced(const GroupRecord& r) const;
  uint32_t epoch() const { return epoch_; }

 private:
  struct Inflight {
    JobTask task;
    ExtentId extent;
    int64_t started = 0;
  };
  struct Queued {
    JobKind kind;
    int attempts = 0;
    bool scrub = false;  // a scrub was asked for too: it stays owed if the other work is moot
  };

  void enqueue(const ExtentId& e, JobKind kind, int attempts);
  void evaluate_all();
  void evaluate(const ExtentId& e, const GroupRecord& r);
  void pump(int64_t now_ms);
  void drop_unreferenced(const std::vector<GroupRecord>& records);
  void forget_task(uint64_t id, bool requeue);
  void after_task(const ExtentId& e);
  bool referenced(const UnitPlace& place, const UnitKey& key) const;

  const JobConfig config_;
  const uint32_t epoch_;
  Topology topology_;
  uint64_t next_task_ = 1;
  uint64_t next_version_ = 1;
  std::map<ExtentId, GroupRecord> catalog_;
  std::map<ExtentId, Queued> queued_;   // waiting for a worker
  std::deque<ExtentId> order_;          // FIFO of queued_ (entries may be stale)
  std::map<uint64_t, Inflight> inflight_;
  std::map<ExtentId, uint64_t> busy_;   // extent -> task in flight
  std::map<ExtentId, int> attempts_;
  std::set<ExtentId> unrecoverable_;
  std::set<ExtentId> scrub_after_;      // scrubs asked for while a task held the extent
  JobProgress run_;
  std::vector<JobAction> actions_;
};

}  // namespace nasd::scaleout
