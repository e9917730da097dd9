// The orphan sweep's machine (orphan_sweep.h): what it drops and what it must never drop, page
// by page, and a deterministic simulation over random drives, references, versions and pages.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "cluster/scaleout/orphan_sweep.h"
#include "cluster/scaleout/unit_store.h"

namespace nasd::scaleout {
namespace {

uint64_t client_v(uint32_t epoch, uint64_t n) { return (1ull << 63) | (uint64_t(epoch) << 40) | n; }
uint64_t job_v(uint32_t epoch, uint64_t n) { return (uint64_t(epoch) << 40) | n; }

Topology topology(int nodes, int drives) {
  Topology t;
  for (int i = 1; i <= nodes; i++) {
    NodeState n;
    n.id = uint32_t(i);
    n.alive = true;
    for (int d = 0; d < drives; d++) n.drives.push_back(DriveState{true});
    t.nodes.push_back(n);
  }
  return t;
}

// Runs the machine against `drives` (place -> keys held), pages of `page` keys; returns what
// it dropped per place.
std::map<std::pair<uint32_t, uint32_t>, std::set<UnitKey>> run(
    OrphanSweep& sweep, const std::map<std::pair<uint32_t, uint32_t>, std::set<UnitKey>>& drives,
    uint32_t page, std::set<std::pair<uint32_t, uint32_t>> failing = {}) {
  std::map<std::pair<uint32_t, uint32_t>, std::set<UnitKey>> dropped;
  for (int round = 0; round < 10000 && !sweep.done(); round++) {
    for (const SweepAction& a : sweep.take_actions()) {
      const std::pair<uint32_t, uint32_t> p{a.place.node, a.place.drive};
      if (a.kind == SweepAction::Kind::Drop) {
        for (const UnitKey& k : a.keys) dropped[p].insert(k);
        continue;
      }
      if (failing.count(p)) {
        sweep.listed(a.place, UnitStatus::Unreachable, {}, false);
        continue;
      }
      std::vector<UnitKey> keys;
      bool more = false;
      auto it = drives.find(p);
      if (it != drives.end())
        for (auto k = it->second.lower_bound(a.from); k != it->second.end(); ++k) {
          if (keys.size() == page) {
            more = true;
            break;
          }
          keys.push_back(*k);
        }
      sweep.listed(a.place, UnitStatus::Ok, keys, more);
    }
  }
  EXPECT_TRUE(sweep.done());
  return dropped;
}

TEST(OrphanSweep, AUnitTheCatalogReferencesIsNeverDropped) {
  SweepFence fence{5, 100, 7};
  const UnitKey live{10, 1, job_v(3, 9), 0};     // an old pass's version, still in the catalog
  const UnitKey orphan{10, 1, job_v(3, 8), 0};   // the same pass's, named by nothing
  const UnitPlace at{2, 1};
  OrphanSweep sweep(fence, {UnitRef{at, live}}, topology(3, 2));
  auto dropped = run(sweep, {{{2, 1}, {live, orphan}}}, 16);
  EXPECT_EQ((dropped[{2, 1}]), (std::set<UnitKey>{orphan}));
  EXPECT_EQ(sweep.progress().units_referenced, 1u);
  EXPECT_EQ(sweep.progress().units_dropped, 1u);
  EXPECT_EQ(sweep.progress().drives_listed, 6u);
  EXPECT_EQ(sweep.progress().sweeps, 1u);
  EXPECT_FALSE(sweep.progress().running);
}

TEST(OrphanSweep, ACopyOfAReferencedKeyOnAnotherDriveIsAnOrphan) {
  SweepFence fence{5, 100, 7};
  const UnitKey k{10, 1, job_v(3, 9), 2};
  OrphanSweep sweep(fence, {UnitRef{UnitPlace{1, 0}, k}}, topology(2, 1));
  auto dropped = run(sweep, {{{1, 0}, {k}}, {{2, 0}, {k}}}, 16);
  EXPECT_TRUE((dropped[{1, 0}]).empty());
  EXPECT_EQ((dropped[{2, 0}]), (std::set<UnitKey>{k}));
}

TEST(OrphanSweep, UnitsAWriterInFlightMayStillRecordAreNeverDropped) {
  // Epoch 5 runs; its write-behind in flight began at counter 100; passes up to 7 have ended.
  SweepFence fence{5, 100, 7};
  const std::set<UnitKey> young{
      UnitKey{10, 1, client_v(5, 100), 0},  // the flush in flight
      UnitKey{10, 2, client_v(5, 250), 3},  // a flush after the fence
      UnitKey{11, 1, job_v(8, 1), 0},       // a pass after the fence
      UnitKey{12, 1, client_v(6, 1), 0},    // a later epoch (never ours to judge)
  };
  OrphanSweep sweep(fence, {}, topology(1, 1));
  auto dropped = run(sweep, {{{1, 0}, young}}, 2);
  EXPECT_TRUE((dropped[{1, 0}]).empty());
  EXPECT_EQ(sweep.progress().units_young, young.size());
}

TEST(OrphanSweep, TheUnitsOfADeadTaskOrWriteBehindAreDropped) {
  SweepFence fence{5, 100, 7};
  const std::set<UnitKey> orphans{
      UnitKey{10, 1, job_v(7, 3), 0},       // the last pass's task whose commit was lost
      UnitKey{10, 1, job_v(2, 3), 5},       // an older pass's
      UnitKey{11, 4, client_v(4, 900), 1},  // a write-behind of the coordinator before
      UnitKey{11, 5, client_v(5, 99), 0},   // this epoch's failed write-behind, before the fence
  };
  const UnitKey metadata{0, 3, 17, 0};      // the checkpoint image: never the sweep's
  std::set<UnitKey> held = orphans;
  held.insert(metadata);
  OrphanSweep sweep(fence, {}, topology(1, 1));
  auto dropped = run(sweep, {{{1, 0}, held}}, 3);
  EXPECT_EQ((dropped[{1, 0}]), orphans);
  EXPECT_EQ(sweep.progress().units_seen, held.size());
}

TEST(OrphanSweep, ADriveThatCannotBeListedIsSkippedAndABadPageDropsNothing) {
  SweepFence fence{5, 100, 7};
  const UnitKey orphan{10, 1, job_v(1, 1), 0};
  Topology t = topology(2, 2);
  t.nodes[1].drives[1].healthy = false;  // node 2 drive 1: not listed at all
  OrphanSweep sweep(fence, {}, t);
  auto dropped = run(sweep, {{{1, 0}, {orphan}}, {{1, 1}, {orphan}}}, 8, {{1, 1}});
  EXPECT_EQ((dropped[{1, 0}]).size(), 1u);
  EXPECT_TRUE((dropped[{1, 1}]).empty());
  EXPECT_EQ(sweep.progress().drives_skipped, 2u);
  EXPECT_EQ(sweep.progress().drives_listed, 2u);

  // A page whose keys are out of order (or start before what was asked) is not trusted.
  OrphanSweep strict(fence, {}, topology(1, 1));
  for (const SweepAction& a : strict.take_actions()) {
    ASSERT_EQ(a.kind, SweepAction::Kind::List);
    strict.listed(a.place, UnitStatus::Ok, {UnitKey{10, 2, 1, 0}, UnitKey{10, 1, 1, 0}}, false);
  }
  EXPECT_TRUE(strict.take_actions().empty());
  EXPECT_EQ(strict.progress().units_dropped, 0u);
  EXPECT_TRUE(strict.done());
}

TEST(OrphanSweep, VersionsSettleByEpochAndFloor) {
  SweepFence f{5, 100, 7};
  EXPECT_TRUE(version_settled(f, client_v(5, 99)));
  EXPECT_FALSE(version_settled(f, client_v(5, 100)));
  EXPECT_TRUE(version_settled(f, client_v(4, (1ull << 40) - 1)));
  EXPECT_FALSE(version_settled(f, client_v(6, 0)));
  EXPECT_TRUE(version_settled(f, job_v(7, (1ull << 40) - 1)));
  EXPECT_FALSE(version_settled(f, job_v(8, 0)));
}

// Random drives holding referenced units, young units and orphans (and the same key on several
// drives), listed in random page sizes with random drives unreachable: a referenced or young
// unit is never dropped, and every orphan on a drive that answered is.
TEST(OrphanSweep, SimulationNeverDropsALiveUnitAndReclaimsEveryOrphanItSees) {
  const int runs = std::getenv("NASD_SIM_RUNS") ? std::atoi(std::getenv("NASD_SIM_RUNS")) : 200;
  for (int seed = 1; seed <= runs; seed++) {
    std::mt19937_64 rng{uint64_t(seed)};
    const int nodes = 1 + int(rng() % 5), drives = 1 + int(rng() % 4);
    const SweepFence fence{uint32_t(2 + rng() % 5), 1 + rng() % 500, uint32_t(1 + rng() % 9)};
    std::map<std::pair<uint32_t, uint32_t>, std::set<UnitKey>> held;
    std::vector<UnitRef> referenced;
    std::set<std::pair<std::pair<uint32_t, uint32_t>, UnitKey>> live, orphan;
    std::set<UnitKey> settled_keys;
    const int units = int(rng() % 400);
    for (int i = 0; i < units; i++) {
      const uint32_t node = 1 + uint32_t(rng() % uint64_t(nodes)), drive = uint32_t(rng() % uint64_t(drives));
      const uint32_t epoch_pick = uint32_t(rng() % 12);
      const bool client = rng() % 2;
      const uint64_t n = client ? rng() % 700 : rng() % 50;
      const uint64_t version = client ? client_v(epoch_pick, n) : job_v(epoch_pick, n);
      UnitKey k{rng() % 4, rng() % 6, version, uint16_t(rng() % 8)};
      const std::pair<uint32_t, uint32_t> p{node, drive};
      held[p].insert(k);
      // The rule of orphan_sweep.h, written out here rather than taken from version_settled.
      const bool settled = client ? epoch_pick < fence.client_epoch ||
                                        (epoch_pick == fence.client_epoch && n < fence.client_floor)
                                  : epoch_pick <= fence.job_epoch;
      if (settled) settled_keys.insert(k);
      if (rng() % 3 == 0) {
        referenced.push_back(UnitRef{UnitPlace{node, drive}, k});
        live.insert({p, k});
      }
    }
    for (const auto& [p, keys] : held)
      for (const UnitKey& k : keys)
        if (!live.count({p, k}) && k.file != 0 && settled_keys.count(k)) orphan.insert({p, k});
    std::set<std::pair<uint32_t, uint32_t>> failing;
    for (int i = 0; i < 2; i++)
      if (rng() % 3 == 0) failing.insert({1 + uint32_t(rng() % uint64_t(nodes)), uint32_t(rng() % uint64_t(drives))});
    OrphanSweep sweep(fence, referenced, topology(nodes, drives));
    auto dropped = run(sweep, held, 1 + uint32_t(rng() % 40), failing);
    for (const auto& [p, keys] : dropped)
      for (const UnitKey& k : keys) {
        ASSERT_FALSE(live.count({p, k})) << "seed " << seed << ": dropped a referenced unit";
        ASSERT_TRUE(orphan.count({p, k})) << "seed " << seed << ": dropped a unit that was not an orphan";
      }
    for (const auto& [p, k] : orphan) {
      if (failing.count(p)) continue;
      ASSERT_TRUE(dropped[p].count(k)) << "seed " << seed << ": an orphan left";
    }
  }
}

}  // namespace
}  // namespace nasd::scaleout
