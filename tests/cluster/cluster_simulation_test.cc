// Deterministic simulation of N-node clusters (2 to 8 nodes, rings and N+1 standby; the HA pair
// is the ring of two): random kills, pauses (SIGSTOP), one-way partitions between any two nodes,
// lost heartbeats and lost storage paths, with the file authority or etcd's semantics. After every event: no volume is trusted by two nodes, and only on a lease the
// authority really granted. After the faults stop, every volume is served by its home node
// again; with one node killed for good, its volumes are served by the node that covers it.
//
// NASD_SIM_RUNS raises the number of runs; a failure prints the seed and the run's trace.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "tests/cluster/cluster_simulation.h"

namespace nasd::cluster::testing {
namespace {

using membership::ClusterMemberConfig;

// `nodes` primaries with `per_node` volumes each, a ring of mirrors, plus a standby covering
// every primary when `standby`.
std::vector<ClusterMemberConfig> cluster(int nodes, int per_node, bool standby,
                                         bool moves = false) {
  std::vector<std::string> names;
  for (int i = 1; i <= nodes; ++i) names.push_back("n" + std::to_string(i));
  if (standby) names.push_back("sb");
  std::map<uint32_t, std::string> home;
  for (int i = 0; i < nodes; ++i)
    for (int k = 0; k < per_node; ++k) home[static_cast<uint32_t>(i * per_node + k)] = names[i];
  std::vector<ClusterMemberConfig> out;
  for (size_t i = 0; i < names.size(); ++i) {
    ClusterMemberConfig c;
    c.self = names[i];
    for (const auto& n : names)
      if (n != c.self) c.peers.push_back(n);
    c.home = home;
    if (standby) {
      if (c.self == "sb")
        for (int k = 0; k < nodes; ++k) c.covers.insert(names[k]);
    } else {
      c.covers.insert(names[(i + nodes - 1) % nodes]);  // the ring: n(i) holds n(i-1)'s mirror
    }
    c.heartbeat_interval_ms = 200;
    c.missed_heartbeats = 5;
    c.lease_ms = 3000;
    c.renew_after_ms = 800;
    c.safety_margin_ms = 500;
    c.retry_ms = 300;
    c.placement_from_authority = moves;
    out.push_back(std::move(c));
  }
  return out;
}

int runs_from_env(int dflt) {
  const char* s = std::getenv("NASD_SIM_RUNS");
  return s ? std::max(1, std::atoi(s)) : dflt;
}

struct Shape {
  int nodes, per_node;
  bool standby;
};

std::string replay(uint64_t seed, const ClusterFaults& f, const Shape& shape, int64_t ms) {
  ClusterSimulation sim(seed, f, cluster(shape.nodes, shape.per_node, shape.standby), true);
  sim.run(ms, true);
  return sim.trace();
}

void soak(const Shape& shape, int runs, const ClusterFaults& faults = {}) {
  constexpr int64_t kFaultyMs = 20000, kHealMs = 25000;
  ClusterStats total;
  for (int run = 0; run < runs; ++run) {
    const uint64_t seed = 0x9e3779b97f4a7c15ull * (run + 1) + shape.nodes + (faults.etcd ? 17 : 0);
    ClusterSimulation sim(seed, faults, cluster(shape.nodes, shape.per_node, shape.standby));
    std::string violation = sim.run(kFaultyMs, true);
    ASSERT_EQ(violation, "") << "seed " << seed << "\n" << replay(seed, faults, shape, kFaultyMs);
    sim.heal();
    ASSERT_EQ(sim.run(kHealMs, false), "") << "seed " << seed << " (after heal)";
    ASSERT_EQ(sim.check_converged(), "") << "seed " << seed << " did not converge";
    const ClusterStats& s = sim.stats();
    total.takeovers += s.takeovers;
    total.failbacks += s.failbacks;
    total.crashes += s.crashes;
    total.pauses += s.pauses;
    total.partitions += s.partitions;
    total.san_cuts += s.san_cuts;
    total.etcd_outages += s.etcd_outages;
    total.etcd_leader_changes += s.etcd_leader_changes;
    total.etcd_lost_races += s.etcd_lost_races;
  }
  std::printf("%d nodes%s, %d runs: %d takeovers, %d failbacks, %d crashes, %d pauses, "
              "%d partitions, %d SAN cuts\n",
              shape.nodes, shape.standby ? " + standby" : "", runs, total.takeovers,
              total.failbacks, total.crashes, total.pauses, total.partitions, total.san_cuts);
  // The runs really exercised failover and failback.
  EXPECT_GT(total.takeovers, runs / 4);
  EXPECT_GT(total.failbacks, runs / 8);
  EXPECT_GT(total.crashes, runs / 4);
  EXPECT_GT(total.pauses, runs / 4);
  EXPECT_GT(total.partitions, runs / 4);
  EXPECT_GT(total.san_cuts, runs / 4);
  if (!faults.etcd) return;
  std::printf("  etcd: %d outages, %d leader changes, %d lost create races\n", total.etcd_outages,
              total.etcd_leader_changes, total.etcd_lost_races);
  EXPECT_GT(total.etcd_outages, runs / 8);
  EXPECT_GT(total.etcd_leader_changes, runs / 4);
  EXPECT_GT(total.etcd_lost_races, 0);
}

ClusterFaults with_etcd() {
  ClusterFaults f;
  f.etcd = true;
  return f;
}

TEST(ClusterSimulation, TwoNodeRingNoSplitBrainAndConverges) { soak({2, 2, false}, runs_from_env(300)); }
TEST(ClusterSimulation, FourNodeRingNoSplitBrainAndConverges) { soak({4, 4, false}, runs_from_env(200)); }
TEST(ClusterSimulation, EightNodeRingNoSplitBrainAndConverges) { soak({8, 1, false}, runs_from_env(60)); }
TEST(ClusterSimulation, FourPlusOneStandbyNoSplitBrainAndConverges) { soak({4, 2, true}, runs_from_env(150)); }
// The same against etcd's semantics (EtcdStoreModel): takes in two steps that other nodes' steps
// (and a pause of the taker) may come between, leases expiring lazily on etcd's side, leader
// changes that extend them, etcd outages, epochs from the store's revision; also checks that
// every new holder's epoch is above the previous one.
TEST(ClusterSimulation, TwoNodeRingWithEtcdNoSplitBrainAndConverges) { soak({2, 2, false}, runs_from_env(400), with_etcd()); }
TEST(ClusterSimulation, FourNodeRingWithEtcdNoSplitBrainAndConverges) { soak({4, 2, false}, runs_from_env(100), with_etcd()); }

// Kill one node for good under the other faults: once they stop, its volumes are served by the
// node that holds its mirror, and every other volume by its home node.
void dead_node_taken_over(const Shape& shape, int runs) {
  ClusterFaults faults;
  for (int run = 0; run < runs; ++run) {
    const uint64_t seed = 77 + run * 1000003ull;
    ClusterSimulation sim(seed, faults, cluster(shape.nodes, shape.per_node, shape.standby));
    ASSERT_EQ(sim.run(5000, true), "") << "seed " << seed;
    const int victim = run % shape.nodes;  // a primary
    sim.heal();
    sim.kill(victim);
    ASSERT_EQ(sim.run(25000, false), "") << "seed " << seed;
    ASSERT_EQ(sim.check_taken_over(), "") << "seed " << seed << " victim " << victim;
  }
}

TEST(ClusterSimulation, FourNodeRingTakesADeadNodesVolumesOver) { dead_node_taken_over({4, 4, false}, runs_from_env(100)); }
TEST(ClusterSimulation, StandbyTakesADeadPrimaryOver) { dead_node_taken_over({3, 2, true}, runs_from_env(100)); }

TEST(ClusterSimulation, WithoutFencingTheCheckerFindsSplitBrain) {
  ClusterFaults faults;
  faults.fencing = false;
  faults.link_toggle = 0.01;
  int found = 0;
  for (int run = 0; run < 40; ++run) {
    ClusterSimulation sim(500 + run, faults, cluster(4, 1, false));
    if (sim.run(20000, true).find("SPLIT BRAIN") != std::string::npos) ++found;
  }
  EXPECT_GT(found, 5);
}

TEST(ClusterSimulation, EtcdWithoutCompareAndSwapTheCheckerFindsTwoOwners) {
  // The create as an unconditional put: two nodes that both read "free" both get the lease.
  ClusterFaults faults = with_etcd();
  faults.etcd_cas = false;
  faults.link_toggle = 0.01;
  faults.san_toggle = 0.01;  // holders cut from etcd: leases lapse while both nodes want them
  faults.max_authority_delay_ms = 200;
  int found = 0;
  for (int run = 0; run < 200; ++run) {
    ClusterSimulation sim(2000 + run, faults, cluster(2, 1, false));
    if (!sim.run(20000, true).empty()) ++found;
  }
  std::printf("without the compare: %d of 200 runs had two owners\n", found);
  EXPECT_GT(found, 5);
}

TEST(ClusterSimulation, QuietClusterServesHomeVolumesAndNeverMovesThem) {
  ClusterFaults none;
  none.link_toggle = none.san_toggle = none.crash = none.pause = none.loss = 0;
  ClusterSimulation sim(7, none, cluster(4, 4, true));
  ASSERT_EQ(sim.run(30000, true), "");
  EXPECT_EQ(sim.check_converged(), "");
  EXPECT_EQ(sim.stats().takeovers, 0);
}

TEST(ClusterSimulation, SameSeedSameRun) {
  ClusterFaults faults;
  auto a = replay(42, faults, {4, 2, false}, 10000);
  auto b = replay(42, faults, {4, 2, false}, 10000);
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
}

// ---- planned moves (placement.h) ----

ClusterFaults with_moves() {
  ClusterFaults f;
  f.move = 0.004;
  f.cancel = 0.0004;
  f.dirty_close = 0.05;
  return f;
}

// Random EVS and volume moves (and some cancels) interleaved with kills, pauses, partitions,
// lost heartbeats, lost storage paths and failed flushes at close: never two owners, never a
// volume opened without the records another node still holds of it; once the faults stop,
// every move completes (or was cancelled) and every volume is served by its designated node.
void soak_moves(const Shape& shape, int runs) {
  constexpr int64_t kFaultyMs = 20000, kHealMs = 30000;
  const ClusterFaults faults = with_moves();
  ClusterStats total;
  for (int run = 0; run < runs; ++run) {
    const uint64_t seed = 0x51ed2701ull * (run + 1) + shape.nodes;
    ClusterSimulation sim(seed, faults, cluster(shape.nodes, shape.per_node, shape.standby, true));
    std::string violation = sim.run(kFaultyMs, true);
    if (!violation.empty()) {
      ClusterSimulation again(seed, faults, cluster(shape.nodes, shape.per_node, shape.standby, true), true);
      again.run(kFaultyMs, true);
      FAIL() << violation << "\nseed " << seed << "\n" << again.trace();
    }
    sim.heal();
    violation = sim.run(kHealMs, false);
    if (violation.empty()) violation = sim.check_placed();
    if (!violation.empty()) {
      ClusterSimulation again(seed, faults, cluster(shape.nodes, shape.per_node, shape.standby, true), true);
      again.run(kFaultyMs, true);
      again.heal();
      again.run(kHealMs, false);
      FAIL() << violation << "\nseed " << seed << " (after heal)\n" << again.trace();
    }
    const ClusterStats& s = sim.stats();
    total.moves_proposed += s.moves_proposed;
    total.moves_committed += s.moves_committed;
    total.moves_cancelled += s.moves_cancelled;
    total.handovers += s.handovers;
    total.takeovers += s.takeovers;
    total.crashes += s.crashes;
    total.known_gap_opens += s.known_gap_opens;
  }
  std::printf("%d nodes%s, %d runs: %d moves proposed, %d committed, %d cancelled, %d hand-overs, "
              "%d takeovers, %d crashes, %d opens in the known gap\n",
              shape.nodes, shape.standby ? " + standby" : "", runs, total.moves_proposed,
              total.moves_committed, total.moves_cancelled, total.handovers, total.takeovers,
              total.crashes, total.known_gap_opens);
  EXPECT_GT(total.moves_committed, runs);
  EXPECT_GT(total.takeovers, runs / 4);
  EXPECT_GT(total.crashes, runs / 4);
}

TEST(ClusterSimulation, FourNodeRingRandomMovesUnderFaults) { soak_moves({4, 2, false}, runs_from_env(120)); }
TEST(ClusterSimulation, ThreePlusOneStandbyRandomMovesUnderFaults) { soak_moves({3, 2, true}, runs_from_env(100)); }

// Without faults every proposed move completes, each volume opens at its new node without a
// replay (no takeover), and the volumes end where the placement says.
TEST(ClusterSimulation, QuietClusterCompletesEveryMoveWithoutReplay) {
  ClusterFaults f;
  f.link_toggle = f.san_toggle = f.crash = f.pause = f.loss = 0;
  f.move = 0.01;
  for (int run = 0; run < 10; ++run) {
    ClusterSimulation sim(900 + run, f, cluster(4, 2, true, true));
    ASSERT_EQ(sim.run(30000, true), "") << "seed " << 900 + run;
    ASSERT_EQ(sim.run(20000, false), "") << "seed " << 900 + run;
    EXPECT_EQ(sim.check_placed(), "") << "seed " << 900 + run;
    EXPECT_GT(sim.stats().moves_committed, 5);
    EXPECT_EQ(sim.stats().takeovers, 0);
  }
}

// A driver that hands a volume over although its flush failed leaves records behind: the
// checker must find the volume opened elsewhere without them.
TEST(ClusterSimulation, HandingOverAfterAFailedFlushIsCaught) {
  ClusterFaults f = with_moves();
  f.dirty_close = 0.5;
  f.failed_flush_reported_clean = true;
  int found = 0;
  for (int run = 0; run < 30; ++run) {
    ClusterSimulation sim(1300 + run, f, cluster(4, 2, false, true));
    if (sim.run(20000, true).find("LOST") != std::string::npos) ++found;
  }
  EXPECT_GT(found, 3);
}

}  // namespace
}  // namespace nasd::cluster::testing
