// Deterministic simulation of the protection jobs (FoundationDB style, like
// tests/cluster/pair_simulation_test.cc): a coordinator's ProtectionJob, four nodes of four
// drives holding units (modelled by a content token per unit), workers that execute tasks
// after random delays, and random faults: node crashes and restarts, deleted drives, corrupted
// units, lost task results, coordinator failovers (a new epoch from the persisted catalog) and
// client writes racing the jobs. Faults that would exceed the protection are not injected
// (the fault budget: every group, committed or being rebuilt, keeps N readable units).
// Nodes are added (once in every run at a random moment, up to six nodes) and the rebalance job
// spreads the groups onto them while all of the faults above go on. Files' policies change
// (a directory's policy set or cleared: JobConfig::file_policy, a new pass with a new epoch as
// IfsVolume::run_pass makes) to +1n, +2n, +3d:1n, 4+2/2 or back to the default, and the
// restripe job re-lays their groups while the faults go on; client writes plan new groups
// with their file's policy.
//
// Invariants after every step: every group of the catalog keeps >= N units holding its current
// content; a commit only names units that exist with that content; DropUnits never names a
// unit the catalog uses; a unit key never holds two contents, and a rebalance writes only keys
// never used before (fresh) and every unit of the group (full protection, before the commit).
// After the faults stop: the job goes idle, and every group is back at full protection, balanced
// over the nodes, in the shape its file's policy asks for, with all its units readable, and
// every added node alive holds units. A restripe writes only fresh keys.
//
// NASD_SIM_RUNS raises the number of runs; a failure prints the seed, which replays exactly.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "cluster/scaleout/protection_job.h"

namespace nasd::scaleout {
namespace {

constexpr int kNodes = 4, kDrives = 4, kMaxNodes = 6;
constexpr int64_t kStepMs = 100;

struct UnitCell {
  uint64_t token = 0;
  bool corrupt = false;
};

struct Delivery {
  int64_t at = 0;
  bool is_result = false;
  JobTask task;
  TaskResult result;
  uint32_t epoch = 0;
};

class JobSimulation {
 public:
  JobSimulation(uint64_t seed, bool results_lost) : rng_(seed), lossy_(results_lost) {
    for (int i = 0; i < kNodes; ++i) {
      NodeState n;
      n.id = static_cast<uint32_t>(i + 1);
      n.drives.resize(kDrives);
      topo_.nodes.push_back(n);
    }
    config_.task_timeout_ms = 3000;
    add_node_at_ = static_cast<int64_t>(rng_() % 15000);
    job_ = std::make_unique<ProtectionJob>(config_, epoch_, topo_);
    std::vector<GroupRecord> initial;
    for (uint64_t file = 1; file <= 10; ++file) {
      uint64_t offset = 0;
      for (int e = 0; e < 3; ++e) {
        const uint64_t length = (1 + rng_() % 12) * kStripeUnit - rng_() % 1000;
        GroupRecord r;
        if (!plan(file, offset, length, job_->allocate_versions(1), &r)) std::abort();
        write_units(r, next_token_++);
        initial.push_back(r);
        offset += length;
      }
    }
    job_->load(initial);
    job_->topology_changed(0, topo_);
    process();
  }

  // Runs `ms` of simulated time; returns a violated invariant or "".
  std::string run(int64_t ms, bool faults) {
    faults_ = faults;
    for (int64_t end = now_ + ms; now_ < end && violation_.empty(); now_ += kStepMs) {
      if (faults_ && now_ >= add_node_at_ && !added_once_) {
        added_once_ = true;
        add_node();
      }
      if (faults_) inject();
      deliver();
      job_->tick(now_);
      process();
      check_groups();
    }
    return violation_;
  }

  // Faults stop: every node either comes back or is gone for good, and a scrub starts.
  void heal() {
    for (NodeState& n : topo_.nodes) {
      if (!n.alive && rng_() % 2 == 0) n.alive = true;
    }
    job_->topology_changed(now_, topo_);
    // Bit rot is found only by reading: the scheduled scrub (OneFS MediaScan) runs once more.
    job_->start_scrub(now_);
    process();
  }

  std::string converged() {
    JobProgress p = job_->progress();
    if (p.running) return "job still running: " + std::to_string(p.inflight) + " in flight";
    if (p.unrecoverable) return std::to_string(p.unrecoverable) + " groups unrecoverable";
    std::map<uint32_t, int> held;
    for (const auto& [e, r] : job_->catalog()) {
      for (const UnitPlace& u : r.places) ++held[u.node];
    }
    for (const NodeState& n : topo_.nodes) {
      if (n.id > kNodes && n.alive && held[n.id] == 0) {
        return "added node " + std::to_string(n.id) + " holds no unit";
      }
    }
    if (p.groups_unbalanced) return std::to_string(p.groups_unbalanced) + " groups unbalanced";
    if (p.groups_misshaped) return std::to_string(p.groups_misshaped) + " groups not restriped";
    for (const auto& [e, r] : job_->catalog()) {
      if (!job_->fully_protected(r)) return "group " + describe(r) + " not fully protected";
      if (!job_->balanced(r)) return "group " + describe(r) + " not balanced";
      if (!job_->shaped(r)) return "group " + describe(r) + " not in its policy's shape";
      for (int i = 0; i < r.shape.width(); ++i) {
        if (!available(r.places[i], r.key(i), expected(r))) {
          auto c = cells_.find(key_of(r.places[i], r.key(i)));
          return "group " + describe(r) + " unit " + std::to_string(i) + " unreadable" +
                 (c == cells_.end() ? " (absent)"
                                    : (c->second.corrupt ? " (corrupt)" : " (other content)")) +
                 (usable(r.places[i]) ? "" : " (unusable)");
        }
      }
    }
    return "";
  }

  int stat(const std::string& k) { return stats_[k]; }

 private:
  bool plan(uint64_t file, uint64_t offset, uint64_t length, uint64_t version, GroupRecord* r,
            uint64_t group = ~0ull) {
    std::string err;
    r->file = file;
    r->group = group != ~0ull ? group : offset / kStripeUnit;
    r->version = version;
    r->offset = offset;
    r->length = length;
    return data_shape(config_.policy_for(file), topo_, length, &r->shape, &err) &&
           place_group(r->shape, topo_, file, r->group, &r->places, &err);
  }

  // The content a record must hold: the token of the client write that last covered it.
  uint64_t expected(const GroupRecord& r) { return content_[{r.file, r.offset}]; }

  void write_units(const GroupRecord& r, uint64_t token) {
    for (int i = 0; i < r.shape.width(); ++i) {
      if (usable(r.places[i])) write_cell(r.places[i], r.key(i), token, true);
    }
    set_content(r, token);
  }

  // Every unit written goes through here: a key holds one content for ever, and a `fresh`
  // write (client writes, re-stripes, rebalance) must use a key never used before.
  void write_cell(const UnitPlace& p, const UnitKey& k, uint64_t token, bool fresh) {
    const auto id = std::make_tuple(k.file, k.group, k.version, k.index);
    auto it = key_content_.find(id);
    const std::string name = std::to_string(k.file) + "/" + std::to_string(k.group) + " v" +
                             std::to_string(k.version) + " #" + std::to_string(k.index);
    if (fresh && it != key_content_.end()) violation_ = "fresh write reuses key " + name;
    if (it != key_content_.end() && it->second != token) {
      violation_ = "key " + name + " given a second content";
    }
    key_content_[id] = token;
    cells_[key_of(p, k)] = UnitCell{token, false};
  }

  void set_content(const GroupRecord& r, uint64_t token) {
    // Extents are keyed by their first byte; a re-striped record's pieces inherit its content.
    content_[{r.file, r.offset}] = token;
  }

  using CellKey = std::tuple<uint32_t, uint32_t, uint64_t, uint64_t, uint64_t, uint16_t>;
  static CellKey key_of(const UnitPlace& p, const UnitKey& k) {
    return {p.node, p.drive, k.file, k.group, k.version, k.index};
  }

  bool usable(const UnitPlace& p) const { return topo_.usable(p.node, p.drive); }

  // The unit exists with this content (a dead node's units still exist).
  bool present(const UnitPlace& p, const UnitKey& k, uint64_t token) const {
    const NodeState* n = topo_.node(p.node);
    if (!n || p.drive >= n->drives.size() || !n->drives[p.drive].healthy) return false;
    auto it = cells_.find(key_of(p, k));
    return it != cells_.end() && !it->second.corrupt && it->second.token == token;
  }
  bool available(const UnitPlace& p, const UnitKey& k, uint64_t token) const {
    return usable(p) && present(p, k, token);
  }

  int count_available(const GroupRecord& r, uint64_t token) const {
    int n = 0;
    for (int i = 0; i < r.shape.width(); ++i) n += available(r.places[i], r.key(i), token);
    return n;
  }

  std::string describe(const GroupRecord& r) const {
    std::ostringstream o;
    o << r.file << "@" << r.offset << " v" << r.version << " " << r.shape.data << "+"
      << r.shape.parity;
    return o.str();
  }

  // Every group the catalog or a pending result refers to keeps N readable units.
  bool within_budget() {
    for (const auto& [e, r] : job_->catalog()) {
      if (count_available(r, expected(r)) < r.shape.data + 0) return false;
    }
    for (const Delivery& d : pending_) {
      if (!d.is_result) continue;
      for (const GroupRecord& r : d.result.replacement) {
        if (count_available(r, pending_token(d)) < r.shape.data) return false;
      }
    }
    return true;
  }
  uint64_t pending_token(const Delivery& d) const {
    auto it = task_tokens_.find(d.result.task);
    return it == task_tokens_.end() ? 0 : it->second;
  }

  // A new node joins with empty drives: the rebalance job must give it its share.
  void add_node() {
    if (topo_.nodes.size() >= static_cast<size_t>(kMaxNodes)) return;
    NodeState n;
    n.id = topo_.nodes.back().id + 1;
    n.drives.resize(kDrives);
    topo_.nodes.push_back(n);
    ++stats_["nodes_added"];
    job_->topology_changed(now_, topo_);
  }

  void inject() {
    const int r = static_cast<int>(rng_() % 1000);
    if (r >= 74 && r < 76) {
      add_node();
      return;
    }
    if (r >= 76 && r < 96) {  // a directory's policy changes: its files' groups are re-laid
      static const char* const kPolicies[] = {"", "+1n", "+2n", "+3d:1n", "4+2/2"};
      const uint64_t file = 1 + rng_() % 10;
      const char* text = kPolicies[rng_() % 5];
      ProtectionPolicy p;
      std::string err;
      if (*text == 0) {
        config_.file_policy.erase(file);
      } else if (parse_protection_policy(text, &p, &err)) {
        config_.file_policy[file] = p;
      }
      ++stats_["policy_changes"];
      fail_over();  // the next pass runs with the new policies, under a new epoch
      return;
    }
    if (r < 8) {  // crash a node
      Topology before = topo_;
      NodeState& n = topo_.nodes[rng_() % topo_.nodes.size()];
      if (!n.alive) return;
      n.alive = false;
      if (!within_budget()) {
        topo_ = before;
        return;
      }
      ++stats_["crashes"];
      job_->topology_changed(now_, topo_);
    } else if (r < 20) {  // a crashed node restarts
      for (NodeState& n : topo_.nodes) {
        if (!n.alive) {
          n.alive = true;
          ++stats_["restarts"];
          job_->topology_changed(now_, topo_);
          break;
        }
      }
    } else if (r < 26) {  // a drive is deleted
      Topology before = topo_;
      NodeState& n = topo_.nodes[rng_() % topo_.nodes.size()];
      DriveState& d = n.drives[rng_() % kDrives];
      if (!d.healthy || n.healthy_drives() <= 2) return;
      d.healthy = false;
      if (!within_budget()) {
        topo_ = before;
        return;
      }
      ++stats_["drives_lost"];
      job_->topology_changed(now_, topo_);
    } else if (r < 36) {  // bit rot in one unit
      if (job_->catalog().empty()) return;
      auto it = job_->catalog().begin();
      std::advance(it, rng_() % job_->catalog().size());
      const GroupRecord g = it->second;
      const int i = static_cast<int>(rng_() % g.shape.width());
      auto cell = cells_.find(key_of(g.places[i], g.key(i)));
      if (cell == cells_.end() || cell->second.corrupt) return;
      cell->second.corrupt = true;
      if (!within_budget()) {
        cell->second.corrupt = false;
        return;
      }
      ++stats_["corruptions"];
    } else if (r < 42) {  // the coordinator fails over: a new epoch from the persisted catalog
      fail_over();
      ++stats_["failovers"];
    } else if (r < 71) {  // a client rewrites a group
      if (job_->catalog().empty()) return;
      auto it = job_->catalog().begin();
      std::advance(it, rng_() % job_->catalog().size());
      const GroupRecord old = it->second;
      GroupRecord g;
      if (!plan(old.file, old.offset, old.length, job_->allocate_versions(1), &g, old.group)) return;
      write_units(g, next_token_++);
      ++stats_["writes"];
      job_->group_written(now_, g);
    } else if (r < 74) {
      ++stats_["scrubs"];
      job_->start_scrub(now_);
    }
  }

  void fail_over() {
    std::vector<GroupRecord> persisted;
    for (const auto& [e, g] : job_->catalog()) persisted.push_back(g);
    job_ = std::make_unique<ProtectionJob>(config_, ++epoch_, topo_);
    job_->load(persisted);
    job_->topology_changed(now_, topo_);
  }

  // The group's bytes cut into pieces under `policy` (as GroupIo::plan_extent does), every
  // unit a fresh key from the task's block of versions.
  bool relay(const JobTask& t, const ProtectionPolicy& policy, uint64_t token, TaskResult* res) {
    const GroupRecord& r = t.record;
    uint64_t at = 0, v = t.first_new_version;
    std::string err;
    while (at < r.length) {
      GroupShape s;
      if (!data_shape(policy, topo_, r.length - at, &s, &err)) return false;
      const uint64_t take = std::min<uint64_t>(r.length - at, uint64_t(s.data) * kStripeUnit);
      GroupRecord piece;
      piece.file = r.file;
      piece.group = r.group;
      piece.version = v++;
      piece.offset = r.offset + at;
      piece.length = take;
      piece.shape = s;
      if (!place_group(s, topo_, r.file, r.group, &piece.places, &err)) return false;
      for (int i = 0; i < piece.shape.width(); ++i) {
        write_cell(piece.places[i], piece.key(i), token, true);
        ++res->units_rebuilt;
      }
      res->replacement.push_back(piece);
      at += take;
    }
    return true;
  }

  // A worker carries out a task against the world (as GroupIo::repair_group does).
  TaskResult execute(const JobTask& t) {
    TaskResult res;
    res.task = t.id;
    const GroupRecord& r = t.record;
    const uint64_t token = expected(r);
    // Units readable with the content of this version (a client may have moved on: then the
    // survivors hold an older token and this task's result will be stale anyway).
    uint64_t found = 0;
    int readable = 0;
    for (int i = 0; i < r.shape.width(); ++i) {
      auto c = cells_.find(key_of(r.places[i], r.key(i)));
      if (usable(r.places[i]) && c != cells_.end() && !c->second.corrupt) {
        if (found == 0) found = c->second.token;
        if (c->second.token != found) {
          violation_ = "units of " + describe(r) + " disagree";
          return res;
        }
        ++readable;
      }
    }
    if (readable < r.shape.data) {
      res.error = "not enough units";
      return res;
    }
    task_tokens_[t.id] = found;
    (void)token;
    if (t.kind == JobKind::Restripe) {
      // GroupIo::restripe_group: read, then re-laid under the file's policy, fresh keys only.
      if (!relay(t, t.policy, found, &res)) {
        res.error = "cannot place";  // the pieces written are dropped by the job
        return res;
      }
      ++stats_["policy_restripes"];
      res.ok = true;
      return res;
    }
    GroupRecord moved = r;
    if (t.kind == JobKind::Rebalance &&
        !rebalance_units(r.shape, topo_, r.places, r.file, r.group, &moved.places).empty()) {
      // (balanced already: the task does a scrub's work, below)
      GroupRecord out = moved;
      out.version = t.first_new_version;
      for (int i = 0; i < out.shape.width(); ++i) {
        if (!usable(out.places[i])) {
          violation_ = "rebalance of " + describe(r) + " placed a unit on an unusable drive";
          return res;
        }
        write_cell(out.places[i], out.key(i), found, true);
        ++res.units_rebuilt;
      }
      ++stats_["rebalances"];
      res.ok = true;
      res.replacement.push_back(out);
      return res;
    }
    std::vector<int> gone, bad;
    for (int i = 0; i < r.shape.width(); ++i) {
      if (!usable(r.places[i])) {
        gone.push_back(i);
      } else if (!available(r.places[i], r.key(i), found)) {
        bad.push_back(i);
      }
    }
    GroupRecord out = r;
    std::string err;
    if (!gone.empty() &&
        !replace_units(r.shape, topo_, r.places, gone, r.file, r.group, &out.places, &err)) {
      // Re-stripe narrower under the file's policy, versions from the task's block.
      if (!relay(t, t.policy, found, &res)) return res;
      res.ok = true;
      ++stats_["restripes"];
      return res;
    }
    for (int i : gone) {
      write_cell(out.places[i], out.key(i), found, false);  // moved: same key, same content
      ++res.units_rebuilt;
    }
    for (int i : bad) {
      write_cell(out.places[i], out.key(i), found, false);  // rebuilt in place
      ++res.units_rebuilt;
    }
    res.ok = true;
    res.replacement.push_back(out);
    return res;
  }

  void deliver() {
    std::vector<Delivery> due, later;
    for (Delivery& d : pending_) (d.at <= now_ ? due : later).push_back(std::move(d));
    pending_ = std::move(later);
    for (Delivery& d : due) {
      if (!d.is_result) {
        const NodeState* w = topo_.node(d.task.worker);
        if (!w || !w->alive) continue;  // the worker is down: the task is lost
        Delivery back;
        back.is_result = true;
        back.result = execute(d.task);
        back.epoch = d.epoch;
        if (!violation_.empty()) return;
        if (faults_ && lossy_ && rng_() % 10 == 0) {
          ++stats_["results_lost"];
          continue;
        }
        back.at = now_ + kStepMs * static_cast<int64_t>(1 + rng_() % 5);
        pending_.push_back(std::move(back));
      } else {
        job_->task_done(now_, d.result);
        process();
      }
    }
  }

  void process() {
    for (JobAction& a : job_->take_actions()) {
      switch (a.kind) {
        case JobAction::Kind::Assign: {
          Delivery d;
          d.at = now_ + kStepMs * static_cast<int64_t>(1 + rng_() % 5);
          d.task = a.task;
          d.epoch = job_->epoch();
          pending_.push_back(std::move(d));
          break;
        }
        case JobAction::Kind::Commit: {
          ++stats_["commits"];
          uint64_t token = 0;
          auto old = content_.find({a.extent.file, a.extent.offset});
          if (old != content_.end()) token = old->second;
          for (const GroupRecord& r : a.records) {
            if (count_available(r, token) < r.shape.data) {
              violation_ = "commit of " + describe(r) + " names units that do not hold its data";
            }
            set_content(r, token);
          }
          break;
        }
        case JobAction::Kind::DropUnits:
          for (const UnitRef& u : a.units) {
            for (const auto& [e, r] : job_->catalog()) {
              if (r.group == u.key.group && r.file == u.key.file && r.version == u.key.version &&
                  u.key.index < r.places.size() && r.places[u.key.index] == u.place) {
                violation_ = "drop of a unit the catalog uses: " + describe(r);
              }
            }
            if (usable(u.place)) cells_.erase(key_of(u.place, u.key));
          }
          break;
      }
    }
  }

  void check_groups() {
    for (const auto& [e, r] : job_->catalog()) {
      int n = 0;
      for (int i = 0; i < r.shape.width(); ++i) n += present(r.places[i], r.key(i), expected(r));
      if (n < r.shape.data) {
        violation_ = "group " + describe(r) + " lost data: " + std::to_string(n) + " units left";
        return;
      }
    }
  }

  std::mt19937_64 rng_;
  bool lossy_;
  bool faults_ = true;
  JobConfig config_;
  uint32_t epoch_ = 1;
  Topology topo_;
  std::unique_ptr<ProtectionJob> job_;
  std::map<CellKey, UnitCell> cells_;
  std::map<std::tuple<uint64_t, uint64_t, uint64_t, uint16_t>, uint64_t> key_content_;
  int64_t add_node_at_ = 0;
  bool added_once_ = false;
  std::map<std::pair<uint64_t, uint64_t>, uint64_t> content_;
  std::map<uint64_t, uint64_t> task_tokens_;
  std::vector<Delivery> pending_;
  uint64_t next_token_ = 1;
  int64_t now_ = 0;
  std::string violation_;
  std::map<std::string, int> stats_;
};

int runs_from_env(int dflt) {
  const char* s = std::getenv("NASD_SIM_RUNS");
  return s ? std::max(1, std::atoi(s)) : dflt;
}

TEST(ProtectionJobSimulation, NothingLostAndBackToFullProtection) {
  const int runs = runs_from_env(150);
  std::map<std::string, int> total;
  for (int run = 0; run < runs; ++run) {
    const uint64_t seed = 0x9e3779b97f4a7c15ull * (run + 1);
    JobSimulation sim(seed, true);
    std::string v = sim.run(20000, true);
    ASSERT_EQ(v, "") << "seed " << seed;
    sim.heal();
    v = sim.run(60000, false);
    ASSERT_EQ(v, "") << "seed " << seed << " (after heal)";
    ASSERT_EQ(sim.converged(), "") << "seed " << seed;
    for (const char* k : {"crashes", "restarts", "drives_lost", "corruptions", "failovers",
                          "writes", "scrubs", "commits", "restripes", "results_lost",
                          "nodes_added", "rebalances", "policy_changes", "policy_restripes"}) {
      total[k] += sim.stat(k);
    }
  }
  std::string line;
  for (const auto& [k, v] : total) line += k + "=" + std::to_string(v) + " ";
  std::printf("%d runs: %s\n", runs, line.c_str());
  // The runs really exercised the faults, not just a quiet cluster.
  EXPECT_GT(total["crashes"], runs / 2);
  EXPECT_GT(total["drives_lost"], runs / 2);
  EXPECT_GT(total["corruptions"], runs);
  EXPECT_GT(total["failovers"], runs);
  EXPECT_GT(total["restripes"], runs / 4);
  EXPECT_GT(total["results_lost"], runs / 4);
  EXPECT_GE(total["nodes_added"], runs);
  EXPECT_GT(total["rebalances"], runs * 5);
  EXPECT_GT(total["policy_changes"], runs * 2);
  EXPECT_GT(total["policy_restripes"], runs * 5);
}

}  // namespace
}  // namespace nasd::scaleout
