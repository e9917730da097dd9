// Deterministic simulation of the scale-out coordination protocol (coordination_simulation.h
// says what it simulates and checks): many seeds under every fault, a shared tree of
// concurrent directory moves, the fence switched off, a dead node's slots timed.
//
// NASD_SIM_RUNS sets the number of runs, NASD_SIM_SEED runs one seed; a failure prints the seed
// and the last events of the run.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/cluster/scaleout/coordination_simulation.h"

namespace nasd::scaleout::coord::testing {
namespace {

int runs_from_env(int dflt) {
  const char* s = std::getenv("NASD_SIM_RUNS");
  return s ? std::max(1, std::atoi(s)) : dflt;
}

// One run: faults, heal, settle and check; then every node restarted at once, settle and
// check again. "" or what went wrong.
std::string one_run(uint64_t seed, const Faults& faults, Stats* stats) {
  Simulation sim(seed, faults);
  std::string v = sim.run(20000, true);
  if (v.empty()) {
    sim.heal();
    v = sim.settle(40000);
  }
  if (v.empty()) v = sim.check_namespace();
  if (v.empty()) {
    sim.restart_all();
    v = sim.settle(40000);
    if (v.empty()) v = sim.check_namespace();
    if (!v.empty()) v = "after every node restarted: " + v;
  }
  sim.finish_stats();
  if (stats) *stats = sim.stats();
  if (!v.empty()) v += "\n" + sim.trace();
  return v;
}

TEST(CoordinationSimulation, NothingAcknowledgedIsLostAndTheNamespaceStaysATree) {
  int runs = runs_from_env(100);
  uint64_t first = 1;
  if (const char* s = std::getenv("NASD_SIM_SEED")) {
    first = std::strtoull(s, nullptr, 10);
    runs = 1;
  }
  Stats total;
  for (int run = 0; run < runs; ++run) {
    const uint64_t seed = first + static_cast<uint64_t>(run) * 7919;
    Stats s;
    const std::string v = one_run(seed, Faults{}, &s);
    ASSERT_EQ(v, "") << "seed " << seed << " (NASD_SIM_SEED=" << seed << " replays it)";
    total.crashes += s.crashes;
    total.pauses += s.pauses;
    total.partitions += s.partitions;
    total.takeovers += s.takeovers;
    total.cross_slot += s.cross_slot;
    total.replacing_renames += s.replacing_renames;
    total.dir_moves += s.dir_moves;
    total.cycles_refused += s.cycles_refused;
    total.max_takeover_ms = std::max(total.max_takeover_ms, s.max_takeover_ms);
    for (const auto& [k, n] : s.acked) total.acked[k] += n;
  }
  std::printf("%d runs: %d kills, %d pauses, %d partitions, %d takeovers (longest %lld ms from "
              "the grant to serving), %d cross-slot namespace calls, %d renames onto a file, "
              "%d directories moved, %d moves under themselves refused\n  acknowledged:",
              runs, total.crashes, total.pauses, total.partitions, total.takeovers,
              static_cast<long long>(total.max_takeover_ms), total.cross_slot,
              total.replacing_renames, total.dir_moves, total.cycles_refused);
  for (const auto& [k, n] : total.acked) std::printf(" %s %d", op_kind_name(k), n);
  std::printf("\n");
  if (runs < 10) return;
  // The runs really exercised kills, pauses, takeovers, transactions and the data path.
  EXPECT_GT(total.crashes, runs);
  EXPECT_GT(total.pauses, runs);
  EXPECT_GT(total.takeovers, runs * 4);
  EXPECT_GT(total.cross_slot, runs * 5);
  EXPECT_GT(total.acked[OpKind::Write], runs * 4);
  EXPECT_GT(total.acked[OpKind::Read], runs * 8);
  EXPECT_GT(total.acked[OpKind::Rename], runs * 2);
  EXPECT_GT(total.acked[OpKind::Rmdir], runs / 2);
  EXPECT_GT(total.replacing_renames, runs / 5);
  EXPECT_GT(total.dir_moves, runs / 10);
  EXPECT_GT(total.cycles_refused, 0);
}

// With the stores' fence switched off, a paused coordinator or token holder that wakes up
// after its lease writes under its old epoch, and the checks must catch it.
TEST(CoordinationSimulation, WithoutTheFenceTheChecksFindAStaleWrite) {
  Faults f;
  f.fencing = false;
  f.pause = 0.002;
  int found = 0;
  for (int run = 0; run < 20; ++run) {
    Simulation sim(5000 + run, f);
    if (sim.run(20000, true).find("FENCE") != std::string::npos) ++found;
  }
  std::printf("without the fence: %d of 20 runs caught a stale write\n", found);
  EXPECT_GT(found, 2);
}

// Every client moves directories of one shared tree at once, through random nodes, under the
// faults: the moves that would close a loop must be refused (each checked against ancestors
// that no concurrent move can change until it commits), so the tree never gets a cycle or a
// part cut off from the root.
TEST(CoordinationSimulation, ConcurrentDirectoryMovesNeverMakeACycle) {
  Faults f;
  f.shared_tree = true;
  Stats total;
  const int runs = runs_from_env(40);
  for (int run = 0; run < runs; ++run) {
    const uint64_t seed = 9000 + static_cast<uint64_t>(run) * 31;
    Stats s;
    const std::string v = one_run(seed, f, &s);
    ASSERT_EQ(v, "") << "seed " << seed;
    total.dir_moves += s.dir_moves;
    total.cycles_refused += s.cycles_refused;
  }
  std::printf("shared tree, %d runs: %d directories moved, %d moves refused\n", runs,
              total.dir_moves, total.cycles_refused);
  EXPECT_GT(total.dir_moves, runs * 3);
  EXPECT_GT(total.cycles_refused, runs);
}

// Coordinator loss: kill -9 of one node on an otherwise quiet cluster (clients still busy); its
// slots are served again by survivors within one lease plus 2 s, and the slots of every other
// node are served throughout.
TEST(CoordinationSimulation, ADeadNodesSlotsMoveWithinALeasePlusTwoSeconds) {
  Faults quiet;
  quiet.crash = quiet.pause = quiet.link_toggle = quiet.loss = quiet.duplicate = 0;
  int64_t longest = 0;
  for (int run = 0; run < 8; ++run) {
    Simulation sim(700 + run, quiet);
    ASSERT_EQ(sim.run(3000, false), "") << "seed " << 700 + run;
    std::string why;
    const int victim = run % kNodes;
    const int64_t ms = sim.time_takeover(victim, &why);
    ASSERT_GE(ms, 0) << "seed " << 700 + run << ": " << why << "\n" << sim.trace();
    std::printf("n%d killed: its slots served again after %lld ms (lease %lld ms)\n", victim + 1,
                static_cast<long long>(ms), static_cast<long long>(sim.lease_ms()));
    longest = std::max(longest, ms);
    EXPECT_LE(ms, sim.lease_ms() + 2000) << "seed " << 700 + run;
  }
  EXPECT_GT(longest, 0);
}

TEST(CoordinationSimulation, SameSeedSameRun) {
  Simulation a(42, Faults{}), b(42, Faults{});
  a.run(8000, true);
  b.run(8000, true);
  EXPECT_EQ(a.trace(), b.trace());
  EXPECT_FALSE(a.trace().empty());
}

}  // namespace
}  // namespace nasd::scaleout::coord::testing
