#include "cluster/scaleout/protection_job.h"

#include <algorithm>
#include <limits>

namespace nasd::scaleout {

const char* job_kind_name(JobKind k) {
  switch (k) {
    case JobKind::Reprotect: return "reprotect";
    case JobKind::Scrub: return "scrub";
    case JobKind::Rebalance: return "rebalance";
    case JobKind::Restripe: return "restripe";
  }
  return "?";
}

ProtectionJob::ProtectionJob(JobConfig config, uint32_t epoch, const Topology& topology)
    : config_(config), epoch_(epoch), topology_(topology) {}

uint64_t ProtectionJob::allocate_versions(uint64_t n) {
  const uint64_t v = (static_cast<uint64_t>(epoch_) << 40) | next_version_;
  next_version_ += n;
  return v;
}

bool ProtectionJob::fully_protected(const GroupRecord& r) const {
  if (!check_placement(r.shape, topology_, r.places, true).empty()) return false;
  if (!r.shape.under_protected) return true;
  GroupShape best;
  std::string err;
  // Under-protected is full protection only when the topology allows nothing better.
  return data_shape(config_.policy_for(r.file), topology_, r.length, &best, &err) &&
         best.under_protected && best.parity <= r.shape.parity;
}

bool ProtectionJob::shaped(const GroupRecord& r) const {
  if (!fully_protected(r)) return false;
  const ProtectionPolicy& p = config_.policy_for(r.file);
  GroupShape want;
  std::string err;
  if (!data_shape(p, topology_, r.length, &want, &err)) return true;  // nothing placeable
  if (want.under_protected || r.shape.under_protected) return true;  // re-protect's business
  if (r.shape.parity != want.parity || r.shape.per_node != want.per_node) return false;
  return p.data_width == 0 || r.shape.data <= p.data_width;
}

bool ProtectionJob::balanced(const GroupRecord& r) const {
  if (!fully_protected(r)) return false;
  std::vector<UnitPlace> ignored;
  return rebalance_units(r.shape, topology_, r.places, r.file, r.group, &ignored).empty();
}

void ProtectionJob::load(const std::vector<GroupRecord>& records) {
  catalog_.clear();
  for (const GroupRecord& r : records) catalog_[ExtentId{r.file, r.offset}] = r;
  evaluate_all();
}

void ProtectionJob::enqueue(const ExtentId& e, JobKind kind, int attempts) {
  if (busy_.count(e) && kind == JobKind::Scrub) {
    scrub_after_.insert(e);  // the task in flight may be dropped: scrub once it is over
    return;
  }
  if (busy_.count(e) || unrecoverable_.count(e)) return;
  if (queued_.empty() && inflight_.empty()) {
    run_ = JobProgress{};
    run_.kind = kind;
  }
  // The run is named after its most urgent work: reprotect, restripe, rebalance, scrub.
  auto rank = [](JobKind k) {
    switch (k) {
      case JobKind::Reprotect: return 3;
      case JobKind::Restripe: return 2;
      case JobKind::Rebalance: return 1;
      case JobKind::Scrub: return 0;
    }
    return 0;
  };
  if (rank(kind) > rank(run_.kind)) run_.kind = kind;
  auto it = queued_.find(e);
  if (it != queued_.end()) {
    if (kind == JobKind::Scrub) it->second.scrub = true;
    if (kind == JobKind::Reprotect && it->second.kind != JobKind::Reprotect) {
      it->second.kind = kind;
      order_.push_front(e);  // re-protect first; the older entry is skipped as stale
    } else if ((kind == JobKind::Rebalance || kind == JobKind::Restripe) &&
               (it->second.kind == JobKind::Scrub || it->second.kind == JobKind::Rebalance)) {
      it->second.kind = kind;  // both read and verify every unit; a restripe also re-places
    }
    return;
  }
  queued_[e] = Queued{kind, attempts, kind == JobKind::Scrub};
  ++run_.total;
  if (kind == JobKind::Reprotect) {
    order_.push_front(e);
  } else {
    order_.push_back(e);
  }
}

void ProtectionJob::evaluate(const ExtentId& e, const GroupRecord& r) {
  if (!fully_protected(r)) {
    enqueue(e, JobKind::Reprotect, 0);
  } else if (!shaped(r)) {
    enqueue(e, JobKind::Restripe, 0);
  } else if (!balanced(r)) {
    enqueue(e, JobKind::Rebalance, 0);
  }
}

void ProtectionJob::evaluate_all() {
  for (const auto& [e, r] : catalog_) evaluate(e, r);
}

void ProtectionJob::topology_changed(int64_t now_ms, const Topology& topology) {
  topology_ = topology;
  unrecoverable_.clear();  // a node that came back may make them recoverable
  std::vector<uint64_t> orphaned;
  for (const auto& [id, f] : inflight_) {
    const NodeState* n = topology_.node(f.task.worker);
    if (!n || !n->alive) orphaned.push_back(id);
  }
  for (uint64_t id : orphaned) forget_task(id, true);
  evaluate_all();
  pump(now_ms);
}

void ProtectionJob::start_scrub(int64_t now_ms) {
  for (const auto& [e, r] : catalog_) enqueue(e, JobKind::Scrub, 0);
  pump(now_ms);
}

void ProtectionJob::group_written(int64_t now_ms, const GroupRecord& record) {
  const ExtentId e{record.file, record.offset};
  auto it = catalog_.find(e);
  std::vector<GroupRecord> superseded;
  if (it != catalog_.end()) superseded.push_back(it->second);
  catalog_[e] = record;
  attempts_.erase(e);
  unrecoverable_.erase(e);
  drop_unreferenced(superseded);
  // A task in flight on the old version is now stale: task_done will see the version moved.
  evaluate(e, record);
  pump(now_ms);
}

void ProtectionJob::forget_task(uint64_t id, bool requeue) {
  auto it = inflight_.find(id);
  if (it == inflight_.end()) return;
  const ExtentId e = it->second.extent;
  const JobKind kind = it->second.task.kind;
  busy_.erase(e);
  inflight_.erase(it);
  after_task(e);
  if (requeue && catalog_.count(e)) {
    // Counted once per run: enqueue counts it again, so take the first count back.
    if (run_.total > 0) --run_.total;
    enqueue(e, kind, attempts_[e]);
  }
}

bool ProtectionJob::referenced(const UnitPlace& place, const UnitKey& key) const {
  for (auto it = catalog_.lower_bound(ExtentId{key.file, 0});
       it != catalog_.end() && it->first.file == key.file; ++it) {
    const GroupRecord& r = it->second;
    if (r.group == key.group && r.version == key.version && key.index < r.places.size() &&
        r.places[key.index] == place) {
      return true;
    }
  }
  return false;
}

void ProtectionJob::drop_unreferenced(const std::vector<GroupRecord>& records) {
  JobAction a;
  a.kind = JobAction::Kind::DropUnits;
  for (const GroupRecord& r : records) {
    for (size_t i = 0; i < r.places.size(); ++i) {
      const UnitKey k = r.key(static_cast<int>(i));
      if (!referenced(r.places[i], k)) a.units.push_back(UnitRef{r.places[i], k});
    }
  }
  if (!a.units.empty()) actions_.push_back(std::move(a));
}

void ProtectionJob::task_done(int64_t now_ms, const TaskResult& result) {
  auto it = inflight_.find(result.task);
  if (it == inflight_.end()) {
    // Stale: timed out and reassigned, its worker declared lost, or an earlier epoch's.
    drop_unreferenced(result.replacement);
    pump(now_ms);
    return;
  }
  const Inflight f = it->second;
  const ExtentId e = f.extent;
  inflight_.erase(it);
  busy_.erase(e);
  after_task(e);
  auto cur = catalog_.find(e);
  const bool same_version = cur != catalog_.end() && cur->second.version == f.task.record.version &&
                            cur->second.places == f.task.record.places;
  if (!same_version) {
    drop_unreferenced(result.replacement);  // a client rewrote the group meanwhile
    if (cur != catalog_.end()) evaluate(e, cur->second);
    pump(now_ms);
    return;
  }
  // The replacement must hold exactly the extent's bytes, with sane placements and versions
  // that are the old one (rebuilt in place or moved) or the task's own.
  bool valid = result.ok && !result.replacement.empty();
  uint64_t at = f.task.record.offset;
  for (const GroupRecord& r : result.replacement) {
    if (!valid) break;
    const bool own_version = r.version == f.task.record.version ||
                             (r.version >= f.task.first_new_version &&
                              r.version < f.task.first_new_version + kVersionsPerTask);
    valid = r.file == f.task.record.file && r.group == f.task.record.group && r.offset == at &&
            r.length > 0 && own_version &&
            check_placement(r.shape, topology_, r.places, false).empty();
    if (valid && f.task.kind == JobKind::Restripe) {
      // Fresh keys only, at full protection in the policy's shape (or, when the topology
      // moved meanwhile, the group untouched).
      const bool unchanged = r.version == f.task.record.version && r.places == f.task.record.places;
      valid = unchanged || (r.version != f.task.record.version && fully_protected(r) && shaped(r));
    }
    if (valid && f.task.kind == JobKind::Rebalance) {
      // Fresh keys only, and nothing worse than what it replaces: full protection, balanced.
      const bool unchanged = r.version == f.task.record.version && r.places == f.task.record.places;
      valid = unchanged || (r.version != f.task.record.version && balanced(r));
    }
    at += r.length;
  }
  valid = valid && at == f.task.record.offset + f.task.record.length;
  if (!valid) {
    drop_unreferenced(result.replacement);
    if (++attempts_[e] >= kMaxAttempts) {
      unrecoverable_.insert(e);
    } else {
      enqueue(e, f.task.kind, attempts_[e]);
    }
    pump(now_ms);
    return;
  }
  const GroupRecord old = cur->second;
  catalog_.erase(cur);
  for (const GroupRecord& r : result.replacement) catalog_[ExtentId{r.file, r.offset}] = r;
  JobAction commit;
  commit.kind = JobAction::Kind::Commit;
  commit.extent = e;
  commit.records = result.replacement;
  actions_.push_back(std::move(commit));
  drop_unreferenced({old});
  attempts_.erase(e);
  ++run_.done;
  run_.units_rebuilt += static_cast<uint64_t>(result.units_rebuilt);
  if (f.task.kind == JobKind::Rebalance) ++run_.groups_moved;
  if (f.task.kind == JobKind::Restripe) ++run_.groups_restriped;
  // The topology may have moved on while the task ran.
  for (const GroupRecord& r : result.replacement) evaluate(ExtentId{r.file, r.offset}, r);
  pump(now_ms);
}

void ProtectionJob::after_task(const ExtentId& e) {
  // A scrub asked for while the extent was busy (the task may yet be dropped as stale).
  if (scrub_after_.erase(e) && catalog_.count(e)) enqueue(e, JobKind::Scrub, 0);
}

void ProtectionJob::tick(int64_t now_ms) {
  std::vector<uint64_t> late;
  for (const auto& [id, f] : inflight_) {
    if (now_ms - f.started >= config_.task_timeout_ms) late.push_back(id);
  }
  for (uint64_t id : late) forget_task(id, true);
  pump(now_ms);
}

void ProtectionJob::pump(int64_t now_ms) {
  std::map<uint32_t, int> load;
  for (const auto& [id, f] : inflight_) ++load[f.task.worker];
  while (!order_.empty()) {
    const ExtentId e = order_.front();
    auto q = queued_.find(e);
    if (q == queued_.end() || busy_.count(e)) {
      order_.pop_front();
      continue;
    }
    auto rec = catalog_.find(e);
    const bool nothing_to_do =
        rec == catalog_.end() ||
        (q->second.kind == JobKind::Reprotect && fully_protected(rec->second)) ||
        (q->second.kind == JobKind::Restripe && shaped(rec->second)) ||
        (q->second.kind == JobKind::Rebalance && balanced(rec->second));
    if (nothing_to_do && q->second.scrub && rec != catalog_.end()) {
      q->second.kind = JobKind::Scrub;  // healed or balanced meanwhile: the scrub is still owed
    } else if (nothing_to_do) {
      order_.pop_front();
      // Healed, but in the wrong shape or spread unevenly: that is next.
      const bool evaluate_next = q->second.kind != JobKind::Rebalance && rec != catalog_.end();
      queued_.erase(q);
      ++run_.done;  // nothing left to do for it (healed, or gone)
      if (evaluate_next) evaluate(e, rec->second);
      continue;
    }
    if ((q->second.kind == JobKind::Rebalance || q->second.kind == JobKind::Restripe) &&
        !fully_protected(rec->second)) {
      q->second.kind = JobKind::Reprotect;  // degraded since it was queued: repair it first
    } else if (q->second.kind == JobKind::Rebalance && !shaped(rec->second)) {
      q->second.kind = JobKind::Restripe;  // its policy changed since: re-laid, not moved
    }
    uint32_t worker = 0;
    int best = std::numeric_limits<int>::max();
    for (const NodeState& n : topology_.nodes) {
      if (!n.alive) continue;
      const int l = load[n.id];
      if (l < config_.max_tasks_per_node && l < best) {
        best = l;
        worker = n.id;
      }
    }
    if (best == std::numeric_limits<int>::max()) break;  // every worker busy
    order_.pop_front();
    JobTask t;
    t.id = (static_cast<uint64_t>(epoch_) << 32) | next_task_++;
    t.kind = q->second.kind;
    t.worker = worker;
    t.record = rec->second;
    t.first_new_version = allocate_versions(kVersionsPerTask);
    t.policy = config_.policy_for(e.file);
    queued_.erase(q);
    ++load[worker];
    inflight_[t.id] = Inflight{t, e, now_ms};
    busy_[e] = t.id;
    JobAction a;
    a.kind = JobAction::Kind::Assign;
    a.task = t;
    actions_.push_back(std::move(a));
  }
}

std::vector<JobAction> ProtectionJob::take_actions() {
  std::vector<JobAction> out;
  out.swap(actions_);
  return out;
}

JobProgress ProtectionJob::progress() const {
  JobProgress p = run_;
  p.running = !queued_.empty() || !inflight_.empty();
  p.inflight = inflight_.size();
  p.unrecoverable = unrecoverable_.size();
  p.groups_degraded = 0;
  p.groups_unbalanced = 0;
  p.groups = catalog_.size();
  for (const auto& [e, r] : catalog_) {
    if (!fully_protected(r)) {
      ++p.groups_degraded;
    } else if (!shaped(r)) {
      ++p.groups_misshaped;
    } else if (!balanced(r)) {
      ++p.groups_unbalanced;
    }
  }
  return p;
}

}  // namespace nasd::scaleout
