// Deterministic simulation of the pair (FoundationDB style): thousands of random runs with
// partitions, lost storage paths, crashes and restarts. Invariant after every event: no volume
// is trusted by both nodes, and only on a lease the authority really granted. After the faults
// stop, every volume must end up served by its home node again.
//
// NASD_SIM_RUNS (environment) raises the number of runs for a longer soak; a failure prints
// the seed and the event trace of that run, which replays exactly.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "tests/cluster/pair_simulation.h"

namespace nasd::cluster::testing {
namespace {

using membership::PairConfig;

PairConfig config(const std::string& self, const std::string& partner,
                  std::vector<uint32_t> home, std::vector<uint32_t> partner_home) {
  PairConfig c;
  c.self = self;
  c.partner = partner;
  c.home = std::move(home);
  c.partner_home = std::move(partner_home);
  c.heartbeat_interval_ms = 200;
  c.missed_heartbeats = 5;
  c.lease_ms = 3000;
  c.renew_after_ms = 800;
  c.safety_margin_ms = 500;
  c.retry_ms = 300;
  return c;
}

int runs_from_env(int dflt) {
  const char* s = std::getenv("NASD_SIM_RUNS");
  return s ? std::max(1, std::atoi(s)) : dflt;
}

std::string replay(uint64_t seed, const SimFaults& faults, int64_t faulty_ms) {
  PairSimulation sim(seed, faults, config("a", "b", {1, 2}, {3}), config("b", "a", {3}, {1, 2}),
                     /*trace=*/true);
  sim.run(faulty_ms, true);
  return sim.trace();
}

TEST(PairSimulation, NoSplitBrainAndConvergesAfterFaults) {
  const int runs = runs_from_env(3000);
  constexpr int64_t kFaultyMs = 20000, kHealMs = 20000;
  SimFaults faults;
  SimStats total;
  for (int run = 0; run < runs; ++run) {
    uint64_t seed = 0x9e3779b9ull * (run + 1);
    PairSimulation sim(seed, faults, config("a", "b", {1, 2}, {3}),
                       config("b", "a", {3}, {1, 2}));
    std::string violation = sim.run(kFaultyMs, true);
    ASSERT_EQ(violation, "") << "seed " << seed << "\n" << replay(seed, faults, kFaultyMs);
    sim.heal();
    violation = sim.run(kHealMs, false);
    ASSERT_EQ(violation, "") << "seed " << seed << " (after heal)";
    std::string stuck = sim.check_converged();
    ASSERT_EQ(stuck, "") << "seed " << seed << " did not converge";
    total.takeovers += sim.stats().takeovers;
    total.failbacks += sim.stats().failbacks;
    total.crashes += sim.stats().crashes;
    total.partitions += sim.stats().partitions;
    total.san_cuts += sim.stats().san_cuts;
  }
  std::printf("%d runs: %d takeovers, %d failbacks, %d crashes, %d partitions, %d SAN cuts\n",
              runs, total.takeovers, total.failbacks, total.crashes, total.partitions,
              total.san_cuts);
  // The runs really exercised failover and failback, not just a quiet pair.
  EXPECT_GT(total.takeovers, runs / 4);
  EXPECT_GT(total.failbacks, runs / 8);
  EXPECT_GT(total.crashes, runs / 4);
  EXPECT_GT(total.partitions, runs / 4);
  EXPECT_GT(total.san_cuts, runs / 4);
}

TEST(PairSimulation, WithoutFencingTheCheckerFindsSplitBrain) {
  // Same pair, but an "authority" that grants everything: heartbeats alone cannot prevent two
  // owners during a partition, and the invariant check must notice.
  SimFaults faults;
  faults.fencing = false;
  faults.link_toggle = 0.01;
  int found = 0;
  for (int run = 0; run < 50; ++run) {
    PairSimulation sim(1000 + run, faults, config("a", "b", {1}, {2}), config("b", "a", {2}, {1}));
    std::string violation = sim.run(20000, true);
    if (violation.find("SPLIT BRAIN") != std::string::npos) ++found;
  }
  EXPECT_GT(found, 10);
}

// The same pair against etcd's semantics (EtcdStoreModel): takes in two steps that the other
// node's steps may interleave with, leases expiring lazily on etcd's side, leader changes that
// extend them, etcd outages, epochs from the store's revision. Also checks that every new
// holder's epoch is above the previous one.
TEST(PairSimulation, EtcdAuthorityNoSplitBrainAndConvergesAfterFaults) {
  const int runs = runs_from_env(1500);
  SimFaults faults;
  faults.etcd = true;
  SimStats total;
  for (int run = 0; run < runs; ++run) {
    uint64_t seed = 0x51ed2701ull * (run + 1);
    PairSimulation sim(seed, faults, config("a", "b", {1, 2}, {3}),
                       config("b", "a", {3}, {1, 2}));
    std::string violation = sim.run(20000, true);
    ASSERT_EQ(violation, "") << "seed " << seed << "\n" << replay(seed, faults, 20000);
    sim.heal();
    violation = sim.run(20000, false);
    ASSERT_EQ(violation, "") << "seed " << seed << " (after heal)";
    ASSERT_EQ(sim.check_converged(), "") << "seed " << seed << " did not converge";
    total.takeovers += sim.stats().takeovers;
    total.etcd_outages += sim.stats().etcd_outages;
    total.etcd_leader_changes += sim.stats().etcd_leader_changes;
    total.etcd_lost_races += sim.stats().etcd_lost_races;
    total.crashes += sim.stats().crashes;
  }
  std::printf("%d runs: %d takeovers, %d crashes, %d etcd outages, %d leader changes, %d lost "
              "create races\n", runs, total.takeovers, total.crashes, total.etcd_outages,
              total.etcd_leader_changes, total.etcd_lost_races);
  EXPECT_GT(total.takeovers, runs / 4);
  EXPECT_GT(total.etcd_outages, runs / 8);
  EXPECT_GT(total.etcd_leader_changes, runs / 4);
  EXPECT_GT(total.etcd_lost_races, 0);
}

TEST(PairSimulation, EtcdWithoutCompareAndSwapTheCheckerFindsTwoOwners) {
  // The create as an unconditional put: two nodes that both read "free" both get the lease.
  SimFaults faults;
  faults.etcd = true;
  faults.etcd_cas = false;
  faults.link_toggle = 0.01;
  faults.san_toggle = 0.01;  // holders cut from etcd: leases lapse while both nodes want them
  faults.max_authority_delay_ms = 200;
  int found = 0;
  for (int run = 0; run < 200; ++run) {
    PairSimulation sim(2000 + run, faults, config("a", "b", {1}, {2}), config("b", "a", {2}, {1}));
    if (!sim.run(20000, true).empty()) ++found;
  }
  std::printf("without the compare: %d of 200 runs had two owners\n", found);
  EXPECT_GT(found, 5);
}

TEST(PairSimulation, QuietPairServesHomeVolumesAndNeverMovesThem) {
  SimFaults none;
  none.link_toggle = none.san_toggle = none.crash = 0;
  PairSimulation sim(7, none, config("a", "b", {1, 2}, {3}), config("b", "a", {3}, {1, 2}));
  ASSERT_EQ(sim.run(30000, true), "");
  EXPECT_EQ(sim.check_converged(), "");
  EXPECT_EQ(sim.stats().takeovers, 0);
}

TEST(PairSimulation, SameSeedSameRun) {
  SimFaults faults;
  auto a = replay(42, faults, 10000);
  auto b = replay(42, faults, 10000);
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace nasd::cluster::testing
