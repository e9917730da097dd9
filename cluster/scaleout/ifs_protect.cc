// IfsVolume's protection: the thread that watches the topology and runs the protection jobs
// (ProtectionJob driven here): re-protect and scrub by GroupIo::repair_group, rebalance onto
// a joined node by GroupIo::rebalance_group; the status for the admin, the catalog dump and
// fsck over the catalog.
#include <chrono>
#include <future>
#include <sstream>

#include "cluster/scaleout/catalog_text.h"
#include "cluster/scaleout/ifs_policy.h"
#include "cluster/scaleout/ifs_volume.h"
#include "util/log.h"

namespace nasd::scaleout {

namespace {

// A pass checkpoints its commits every kCommitsPerCheckpoint commits (pass_checkpoint_batch_)
// or kCheckpointEveryMs, whichever comes first: a coordinator killed mid-pass loses at most
// that much of the pass's work (its new units are then garbage; the old ones still hold the
// data) and its successor's pass starts from the last checkpoint.
constexpr int64_t kCheckpointEveryMs = 2000;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool same_topology(const Topology& a, const Topology& b) {
  if (a.nodes.size() != b.nodes.size()) return false;
  for (size_t i = 0; i < a.nodes.size(); i++) {
    const NodeState &x = a.nodes[i], &y = b.nodes[i];
    if (x.id != y.id || x.alive != y.alive || x.drives.size() != y.drives.size()) return false;
    for (size_t d = 0; d < x.drives.size(); d++)
      if (x.drives[d].healthy != y.drives[d].healthy) return false;
  }
  return true;
}

}  // namespace

std::string IfsHealth::text() const {
  std::ostringstream o;
  o << "nodes " << nodes_alive << "/" << nodes << " alive, drives " << drives_healthy << "/"
    << drives << " healthy\n"
    << "files " << files << ", groups " << groups << ", below full protection "
    << groups_degraded << ", unreadable " << groups_unreadable << ", restripe due "
    << groups_misshaped << "\n"
    << "reprotect: " << (job.running ? "running" : "idle") << " (" << job_kind_name(job.kind)
    << "), groups " << job.done << "/" << job.total << " done, " << job.inflight
    << " in flight, " << job.units_rebuilt << " units rebuilt, " << job.unrecoverable
    << " unrecoverable; passes " << passes << "\n"
    << "checkpoint generation " << checkpoint_generation << ", durable seq " << durable_seq
    << ", not yet striped " << dirty_bytes << " bytes\n"
    << sweep.text() << "\n";
  return o.str();
}

IfsHealth IfsVolume::health() {
  const Topology t = cluster_->topology();
  IfsHealth s;
  s.nodes = static_cast<int>(t.nodes.size());
  for (const NodeState& n : t.nodes) {
    s.nodes_alive += n.alive ? 1 : 0;
    s.drives += static_cast<int>(n.drives.size());
    if (n.alive) s.drives_healthy += n.healthy_drives();
  }
  {
    std::lock_guard lock(mu_);
    ProtectionJob judge(job_config_locked(), 0, t);
    for (const auto& [ino, n] : live_.inodes) {
      if (n.attr.type == fs::FileType::Reg) ++s.files;
      for (const auto& [off, r] : n.extents) {
        ++s.groups;
        if (!judge.fully_protected(r)) {
          ++s.groups_degraded;
        } else if (!judge.shaped(r)) {
          ++s.groups_misshaped;
        }
        int lost = 0;
        for (const UnitPlace& p : r.places) lost += t.usable(p.node, p.drive) ? 0 : 1;
        if (lost > r.shape.parity) ++s.groups_unreadable;
      }
    }
    // A slot being flushed is not striped until its groups are in the catalog: counting only
    // dirty_ would say 0 while the last flush still writes (and a reader of the figure would
    // find a non-empty file with no groups). A slot written again meanwhile counts once.
    for (const auto& [k, b] : dirty_) s.dirty_bytes += b->size();
    for (const auto& [k, b] : flushing_)
      if (!dirty_.count(k)) s.dirty_bytes += b->size();
    s.durable_seq = durable_seq_;
    s.checkpoint_generation = live_.generation;
  }
  std::lock_guard lock(status_mu_);
  s.job = job_progress_;
  s.passes = passes_;
  s.sweep = sweep_progress_;
  return s;
}

void IfsVolume::protect_loop() {
  Topology last;
  bool first = true;
  int64_t last_pass = 0;
  int64_t last_sweep = now_ms();
  for (;;) {
    bool scrub = false, restripe = false;
    {
      std::unique_lock lock(stop_mu_);
      if (stop_cv_.wait_for(lock, std::chrono::milliseconds(500),
                            [&] { return stopping_ || scrub_requested_ || restripe_requested_; }) &&
          stopping_)
        return;
      scrub = scrub_requested_;
      scrub_requested_ = false;
      restripe = restripe_requested_;
      restripe_requested_ = false;
    }
    try {
      const Topology t = cluster_->topology();
      const bool changed = first || !same_topology(t, last);
      first = false;
      last = t;
      if (scrub) {
        last_pass = now_ms();
        run_pass(t, true);
        continue;
      }
      // The orphan sweep, between passes (it takes the pass lock): units of tasks and
      // write-behinds whose results were lost, and deletions that could not reach a node.
      if (sweep_every_.count() > 0 && now_ms() - last_sweep >= sweep_every_.count()) {
        last_sweep = now_ms();
        sweep_now();
      }
      // A pass when the topology changed (a node lost, joined or back), and again every few
      // seconds while groups are below full protection or unbalanced (a pass may leave some:
      // a node came back meanwhile, a client rewrote a group under a task).
      // A directory's policy changed: its files' groups are re-laid at once (restripe).
      if (!changed && !restripe && now_ms() - last_pass < 5000) continue;
      if (!pass_due(t)) continue;
      last_pass = now_ms();
      run_pass(t);
    } catch (const std::exception& e) {
      util::log("ifs").error("volume " + options_.name + ": protection pass: " + e.what());
    }
  }
}

ProtectionStatus IfsVolume::group_status(size_t max_listed) {
  const Topology t = cluster_->topology();
  std::vector<GroupRecord> records;
  JobConfig config;
  {
    std::lock_guard lock(mu_);
    records = catalog_locked();
    config = job_config_locked();
  }
  // A job that only judges: loaded with the catalog on today's topology, never run.
  ProtectionJob judge(config, 0, t);
  judge.load(records);
  ProtectionStatus s = protection_status(judge, options_.policy, max_listed);
  std::lock_guard lock(status_mu_);
  s.job = job_progress_;  // the running (or last) pass, not the judge's
  s.sweep = sweep_progress_;
  return s;
}

std::vector<GroupRecord> IfsVolume::catalog_locked() const {
  std::vector<GroupRecord> records;
  for (const auto& [ino, n] : live_.inodes)
    for (const auto& [off, r] : n.extents) records.push_back(r);
  return records;
}

JobConfig IfsVolume::job_config_locked() const {
  JobConfig cfg;
  cfg.policy = options_.policy;
  cfg.file_policy = file_policies(live_, options_.policy);
  return cfg;
}

void IfsVolume::reprotect_now() { run_pass(cluster_->topology()); }

void IfsVolume::start_scrub() {
  {
    std::lock_guard lock(stop_mu_);
    scrub_requested_ = true;
  }
  stop_cv_.notify_all();
}

void IfsVolume::scrub_now() { run_pass(cluster_->topology(), true); }

std::string IfsVolume::catalog_text() {
  std::lock_guard lock(mu_);
  return encode_catalog(catalog_locked());
}

bool IfsVolume::pass_due(const Topology& topology) {
  std::vector<GroupRecord> records;
  JobConfig config;
  {
    std::lock_guard lock(mu_);
    records = catalog_locked();
    config = job_config_locked();
  }
  ProtectionJob judge(config, 0, topology);
  judge.load(records);
  const JobProgress p = judge.progress();
  return p.groups_degraded > 0 || p.groups_unbalanced > 0 || p.groups_misshaped > 0;
}

void IfsVolume::run_pass(const Topology& topology, bool scrub) {
  std::lock_guard pass_lock(pass_mu_);
  std::vector<GroupRecord> records;
  uint32_t job_epoch = 0;
  JobConfig config;
  {
    std::lock_guard lock(mu_);
    records = catalog_locked();
    config = job_config_locked();
    job_epoch = ++live_.job_epoch;
    meta_changed_ = true;  // the pass's epoch is persisted before any of its versions is used
  }
  uint64_t durable = 0;
  if (flush(&durable) != fs::Status::Ok) return;  // no checkpoint: nothing may be rebuilt yet
  ProtectionJob job(config, job_epoch, topology);
  job.load(records);
  job.topology_changed(now_ms(), topology);
  if (scrub) job.start_scrub(now_ms());
  std::map<ExtentId, uint64_t> expected;  // the version each extent's task started from
  for (const GroupRecord& r : records) expected[ExtentId{r.file, r.offset}] = r.version;
  std::vector<JobTask> tasks;
  // Commits are checkpointed in batches: the old units of a batch are deleted only once a
  // checkpoint that references the new ones has landed.
  std::vector<UnitRef> drops;
  size_t commits = 0;
  int64_t last_checkpoint = now_ms();
  auto checkpoint_and_drop = [&]() -> bool {
    last_checkpoint = now_ms();
    if (commits == 0 && drops.empty()) return true;
    if (flush(&durable) != fs::Status::Ok) {
      std::lock_guard lock(mu_);
      garbage_.push_back(Garbage{std::move(drops), snapshots_});  // after a later checkpoint
      drops.clear();
      return false;
    }
    for (const UnitRef& u : drops) cluster_->units()->remove(u.place, u.key);
    drops.clear();
    commits = 0;
    return true;
  };
  size_t rounds = 0;
  const size_t max_rounds = records.size() * 8 + 64;
  util::log("ifs").info("volume " + options_.name + ": protection pass " + std::to_string(job_epoch) +
                        " over " + std::to_string(records.size()) + " groups");
  for (; rounds < max_rounds; rounds++) {
    for (JobAction& a : job.take_actions()) {
      switch (a.kind) {
        case JobAction::Kind::Assign:
          tasks.push_back(std::move(a.task));
          break;
        case JobAction::Kind::Commit: {
          bool installed = false;
          {
            std::lock_guard lock(mu_);
            auto n = live_.inodes.find(a.extent.file);
            if (n != live_.inodes.end()) {
              auto e = n->second.extents.find(a.extent.offset);
              if (e != n->second.extents.end() && e->second.version == expected[a.extent]) {
                n->second.extents.erase(e);
                for (const GroupRecord& r : a.records) {
                  n->second.extents[r.offset] = r;
                  cache_drop(a.extent.file, r.offset / kSlotBytes);
                }
                meta_changed_ = true;
                installed = true;
              }
            }
            // A client rewrote or removed it meanwhile: the rebuilt units are nobody's.
            if (!installed) for (const GroupRecord& r : a.records) throw_away(r, 0);
          }
          for (const GroupRecord& r : a.records) expected[ExtentId{r.file, r.offset}] = r.version;
          commits += installed ? 1 : 0;
          break;
        }
        case JobAction::Kind::DropUnits:
          // Held until a checkpoint holds the commits before them (checkpoint_and_drop).
          drops.insert(drops.end(), a.units.begin(), a.units.end());
          break;
      }
    }
    {
      std::lock_guard lock(status_mu_);
      job_progress_ = job.progress();
    }
    const bool batch_full = commits >= pass_checkpoint_batch_ ||
                            (commits > 0 && now_ms() - last_checkpoint >= kCheckpointEveryMs);
    if (batch_full && !checkpoint_and_drop()) {
      util::log("ifs").error("volume " + options_.name + ": protection pass stopped: no checkpoint");
      break;
    }
    if (tasks.empty()) break;
    {
      std::lock_guard lock(stop_mu_);
      if (stopping_) break;
    }
    // A few groups at a time (each group's units are read and written in parallel already).
    const size_t batch = std::min<size_t>(tasks.size(), 4);
    std::vector<std::future<TaskResult>> running;
    for (size_t i = 0; i < batch; i++) {
      running.push_back(std::async(std::launch::async, [this, &topology, t = tasks[i]] {
        TaskResult result;
        result.task = t.id;
        std::vector<UnitPlace> balanced;
        if (t.kind == JobKind::Restripe) {
          // Re-laid under the file's policy, every unit a fresh key (the old stay until the
          // commit is checkpointed): the group keeps its old protection throughout.
          result.ok = io_.restripe_group(t.record, t.policy, topology, t.first_new_version,
                                         &result.replacement, &result.units_rebuilt, &result.error);
        } else if (t.kind == JobKind::Rebalance &&
            !rebalance_units(t.record.shape, topology, t.record.places, t.record.file,
                             t.record.group, &balanced).empty()) {
          // Onto the balanced places under a fresh version (the old units stay until the
          // commit is checkpointed): the group keeps full protection throughout.
          result.ok = io_.rebalance_group(t.record, topology, t.first_new_version,
                                          &result.replacement, &result.units_rebuilt, &result.error);
        } else {
          // Re-protect and scrub are one repair: rebuild what is unreadable (in place) or
          // misplaced (elsewhere); a rebalance of a group balanced meanwhile scrubs it.
          result.ok = io_.repair_group(t.record, t.policy, topology, t.first_new_version,
                                       &result.replacement, &result.units_rebuilt, &result.error);
        }
        return result;
      }));
    }
    tasks.erase(tasks.begin(), tasks.begin() + static_cast<long>(batch));
    for (auto& f : running) job.task_done(now_ms(), f.get());
  }
  checkpoint_and_drop();
  {
    std::lock_guard lock(status_mu_);
    job_progress_ = job.progress();
    ++passes_;
  }
  const JobProgress p = job.progress();
  util::log("ifs").info("volume " + options_.name + ": protection pass " + std::to_string(job_epoch) +
                        " (" + job_kind_name(p.kind) + (scrub ? ", scrub asked" : "") +
                        ") done: " + std::to_string(p.done) + "/" + std::to_string(p.total) +
                        " groups, " + std::to_string(p.units_rebuilt) + " units written, " +
                        std::to_string(p.groups_moved) + " groups rebalanced, " +
                        std::to_string(p.groups_restriped) + " groups restriped, " +
                        std::to_string(p.unrecoverable) + " unrecoverable");
}

IfsVolume::FsckReport IfsVolume::fsck() {
  std::vector<GroupRecord> records;
  {
    std::lock_guard lock(mu_);
    records = catalog_locked();
  }
  FsckReport rep;
  for (const GroupRecord& r : records) {
    GroupHealth h = io_.verify_group(r);
    ++rep.groups;
    if (!h.bad_parity.empty()) ++rep.bad_parity;
    if (!h.unreadable.empty()) ++rep.unreadable;
    if (!h.readable) ++rep.lost;
  }
  return rep;
}

}  // namespace nasd::scaleout
