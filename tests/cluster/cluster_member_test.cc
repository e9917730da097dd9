// Directed scenarios for the N-node state machine, driven by hand (the random ones are in
// cluster_simulation_test.cc). Node n3 of a 4-node ring: home of volume 3, covers n2 (volume 2).
#include "cluster/membership/cluster_member.h"

#include <gtest/gtest.h>

#include "tests/cluster/member_driver.h"

namespace nasd::membership {
namespace {

using Kind = MemberAction::Kind;

ClusterMemberConfig n3(bool standby_cluster = false) {
  ClusterMemberConfig c;
  c.self = "n3";
  c.peers = {"n1", "n2", "n4"};
  c.home = {{1, "n1"}, {2, "n2"}, {3, "n3"}, {4, "n4"}};
  c.covers = {"n2"};
  if (standby_cluster) {
    c.home = {{1, "n1"}, {2, "n2"}, {4, "n4"}};  // n3 is the standby: no volume of its own
    c.covers = {"n1", "n2", "n4"};
  }
  c.heartbeat_interval_ms = 200;
  c.missed_heartbeats = 5;  // silent for 1000 ms: suspected
  c.lease_ms = 3000;
  c.renew_after_ms = 800;
  c.safety_margin_ms = 500;
  c.retry_ms = 300;
  return c;
}

Heartbeat beat(const std::string& node, std::vector<uint32_t> holding, bool failback = false) {
  return {node, 1, 1, std::move(holding), failback};
}

// Ticks every 50 ms over [from, to]; the nodes in `alive` heartbeat what they hold; every lease
// request is answered at once with `verdict`. Returns every action.
std::vector<MemberAction> run(ClusterMember& m, int64_t from, int64_t to,
                              const std::map<std::string, std::vector<uint32_t>>& alive,
                              LeaseVerdict verdict = LeaseVerdict::Granted) {
  return testing::drive(m, from, to, alive, testing::answer_all(verdict));
}

using testing::has;

TEST(ClusterMember, ServesItsHomeVolumeAndHeartbeatsEveryPeer) {
  ClusterMember m(n3(), 1, 0);
  auto acts = run(m, 0, 400, {{"n1", {1}}, {"n2", {2}}, {"n4", {4}}});
  EXPECT_TRUE(m.serving(3, 400));
  EXPECT_FALSE(m.may_serve(2, 400));
  for (const char* peer : {"n1", "n2", "n4"}) {
    bool sent = false;
    for (const auto& a : acts) sent |= a.kind == Kind::SendHeartbeat && a.node == peer;
    EXPECT_TRUE(sent) << peer;
  }
  EXPECT_EQ(m.state(), MemberState::Normal);
}

TEST(ClusterMember, TakesOverOnlyTheNodeItCovers) {
  ClusterMember m(n3(), 1, 0);
  run(m, 0, 400, {{"n1", {1}}, {"n2", {2}}, {"n4", {4}}});
  // n1 and n2 fall silent: n3 covers n2 only.
  auto acts = run(m, 450, 2000, {{"n4", {4}}});
  EXPECT_TRUE(has(acts, Kind::Serve, 2));
  EXPECT_FALSE(has(acts, Kind::AcquireLease, 1));
  EXPECT_TRUE(m.serving(2, 2000));
  EXPECT_EQ(m.state(), MemberState::Covering);
  // n2 returns and asks for its volume back: drained, released.
  run(m, 2050, 2500, {{"n2", {}}, {"n4", {4}}});  // back, but not asking yet: kept
  EXPECT_TRUE(m.serving(2, 2500));
  acts.clear();
  for (int64_t t = 2550; t <= 3000; t += 50) {
    m.heartbeat_received(t, beat("n2", {}, /*failback=*/true));
    m.tick(t);
    for (auto& a : m.take_actions()) {
      acts.push_back(a);
      if (a.kind == Kind::Unserve) m.volume_closed(t, a.volume);
    }
    for (auto& a : m.take_actions()) acts.push_back(a);
  }
  EXPECT_TRUE(has(acts, Kind::Unserve, 2));
  EXPECT_TRUE(has(acts, Kind::ReleaseLease, 2));
  EXPECT_FALSE(m.may_serve(2, 3000));
}

// Both nodes start at once (a fresh authority holds no lease): n2 heartbeats at once but is
// slow to open volume 2 (its lease request or replay outlasts the failure timeout). n3 must not
// "rescue" it from under n2 then; only a node that stays alive without it for two leases has
// it rescued.
TEST(ClusterMember, DoesNotRescueAVolumeFromANodeThatJustStarted) {
  ClusterMember m(n3(), 1, 0);
  auto acts = run(m, 0, 2 * 3000 - 100, {{"n1", {1}}, {"n2", {}}, {"n4", {4}}});
  EXPECT_FALSE(has(acts, Kind::AcquireLease, 2)) << "took volume 2 from a node still opening it";
  EXPECT_FALSE(m.may_serve(2, 2 * 3000 - 100));
  acts = run(m, 2 * 3000, 2 * 3000 + 1500, {{"n1", {1}}, {"n2", {}}, {"n4", {4}}});
  EXPECT_TRUE(has(acts, Kind::Serve, 2)) << "a live node that never opened its volume kept it";
}

// The authority stops answering everyone for longer than a lease: n2 loses volume 2's lease as
// n3 loses volume 3's. n2 stays alive, so when the authority is back it takes volume 2 again;
// n3 must not "rescue" it meanwhile (it would win the race as often as not, and the two nodes
// would swap volumes), only once n2 stays without it for two leases after the return.
TEST(ClusterMember, DoesNotRescueAVolumeItsLiveNodeLostToAnAuthorityOutage) {
  ClusterMember m(n3(), 1, 0);
  run(m, 0, 7000, {{"n1", {1}}, {"n2", {2}}, {"n4", {4}}});
  EXPECT_TRUE(m.serving(3, 7000));
  auto acts = run(m, 7050, 15000, {{"n1", {}}, {"n2", {}}, {"n4", {}}}, LeaseVerdict::Unreachable);
  EXPECT_FALSE(m.serving(3, 15000)) << "kept serving past its lease";
  EXPECT_FALSE(has(acts, Kind::AcquireLease, 2)) << "asked for volume 2 while the authority was away";
  acts = run(m, 15050, 15050 + 2 * 3000 - 100, {{"n1", {1}}, {"n2", {}}, {"n4", {4}}});
  EXPECT_TRUE(m.serving(3, 15050 + 2 * 3000 - 100)) << "did not take its own volume back";
  EXPECT_FALSE(has(acts, Kind::AcquireLease, 2)) << "took volume 2 while its node could take it back";
  acts = run(m, 15050 + 2 * 3000, 15050 + 2 * 3000 + 1500, {{"n1", {1}}, {"n2", {}}, {"n4", {4}}});
  EXPECT_TRUE(has(acts, Kind::Serve, 2)) << "a live node that never took its volume back kept it";
}

TEST(ClusterMember, RoutesAVolumeToWhoeverSaysItHoldsIt) {
  ClusterMember m(n3(), 1, 0);
  EXPECT_EQ(m.route(1), "n1");  // its home until told otherwise
  // n1 died and n2 (its cover) took volume 1 over: n3 learns it from n2's heartbeat.
  auto acts = run(m, 0, 1500, {{"n2", {1, 2}}, {"n4", {4}}});
  EXPECT_TRUE(has(acts, Kind::Route, 1, "n2"));
  EXPECT_EQ(m.route(1), "n2");
  EXPECT_EQ(m.route(3), "n3");  // served here
}

TEST(ClusterMember, AStandbyServesNothingUntilAPrimaryDies) {
  ClusterMember m(n3(/*standby_cluster=*/true), 1, 0);
  auto acts = run(m, 0, 3000, {{"n1", {1}}, {"n2", {2}}, {"n4", {4}}});
  EXPECT_FALSE(has(acts, Kind::AcquireLease, 1));
  EXPECT_FALSE(has(acts, Kind::Serve, 2));
  acts = run(m, 3050, 5000, {{"n1", {1}}, {"n2", {2}}});  // n4 dies
  EXPECT_TRUE(has(acts, Kind::Serve, 4));
  EXPECT_FALSE(has(acts, Kind::Serve, 1));
  EXPECT_TRUE(m.serving(4, 5000));
}

// A node that has begun to stop keeps renewing what it serves until it closes it, but takes
// nothing over: stopped with the rest of the cluster, it would otherwise take the volumes of
// the nodes stopped a moment before it, replay them, and close them again.
TEST(ClusterMember, AStoppingNodeKeepsWhatItServesAndTakesNothingOver) {
  ClusterMember m(n3(), 1, 0);
  run(m, 0, 400, {{"n1", {1}}, {"n2", {2}}, {"n4", {4}}});
  ASSERT_TRUE(m.serving(3, 400));
  m.quiesce(450);
  auto acts = run(m, 450, 6000, {{"n4", {4}}});  // n2, which n3 covers, stopped first
  EXPECT_FALSE(has(acts, Kind::AcquireLease, 2)) << "a stopping node took n2's volume over";
  EXPECT_TRUE(has(acts, Kind::AcquireLease, 3)) << "stopped renewing what it serves";
  EXPECT_TRUE(m.serving(3, 6000));
}

// settled() lets a restarted node clear its stale-mirror mark (stale_mirror_mark.h): only once
// it opened its own volume again, or after 3 leases of trying; a standby has nothing to open.
TEST(ClusterMember, SettlesOnceItOpenedItsOwnVolumesOrAfterThreeLeases) {
  ClusterMember m(n3(), 1, 0);
  EXPECT_FALSE(m.settled());
  m.tick(0);
  for (const auto& a : m.take_actions())
    if (a.kind == Kind::AcquireLease)
      m.lease_answered(0, a.volume, a.request, {LeaseVerdict::Granted, {}, ""});
  EXPECT_FALSE(m.settled());  // granted and asked to serve, not opened yet
  m.volume_ready(10, 3);
  EXPECT_TRUE(m.settled());

  ClusterMember refused(n3(), 1, 0);
  for (int64_t t = 0; t < 9000; t += 50) {
    refused.tick(t);
    for (const auto& a : refused.take_actions())
      if (a.kind == Kind::AcquireLease)
        refused.lease_answered(t, a.volume, a.request, {LeaseVerdict::HeldByOther, {}, ""});
    EXPECT_FALSE(refused.settled()) << t;
  }
  refused.tick(9000);
  EXPECT_TRUE(refused.settled());

  ClusterMember standby(n3(/*standby_cluster=*/true), 1, 0);
  standby.tick(0);
  EXPECT_TRUE(standby.settled());
}

TEST(ClusterMember, ValidateRefusesBadShapes) {
  ClusterMemberConfig c = n3();
  EXPECT_EQ(validate(c), "");
  c.covers = {"n9"};
  EXPECT_NE(validate(c), "");
  c = n3();
  c.peers = {};
  EXPECT_NE(validate(c), "");
  c = n3();
  c.home[7] = "n9";
  EXPECT_NE(validate(c), "");
}

}  // namespace
}  // namespace nasd::membership

namespace nasd::membership {
namespace {

// As run(), with placement_from_authority: every ReadPlacement is answered with `*placement`.
std::vector<MemberAction> run_placed(ClusterMember& m, int64_t from, int64_t to,
                                     const std::map<std::string, std::vector<uint32_t>>& alive,
                                     const Placement* placement) {
  return testing::drive(m, from, to, alive, testing::answer_all(LeaseVerdict::Granted), placement);
}

TEST(ClusterMember, DoesNotTakeOverFromAMirrorMarkedStaleUntilTheMarkIsCleared) {
  ClusterMemberConfig c = n3();
  c.placement_from_authority = true;
  ClusterMember m(c, 1, 0);
  Placement p = initial_placement({{"evs1", "n1"}, {"evs2", "n2"}, {"evs3", "n3"}, {"evs4", "n4"}},
                                  {{1, "evs1"}, {2, "evs2"}, {3, "evs3"}, {4, "evs4"}});
  p.version = 1;
  run_placed(m, 0, 400, {{"n1", {1}}, {"n2", {2}}, {"n4", {4}}}, &p);
  EXPECT_TRUE(m.serving(3, 400));
  // n2 acknowledged writes its mirror (here) lacks, then fell silent.
  ASSERT_EQ(mark_mirror_stale(p, "n2", "n3", 77), "");
  p.version = 2;
  auto acts = run_placed(m, 450, 3000, {{"n1", {1}}, {"n4", {4}}}, &p);
  EXPECT_FALSE(has(acts, Kind::Serve, 2));
  EXPECT_FALSE(m.serving(2, 3000));
  // The admin accepts the loss (or n2 cleared it): the takeover goes ahead, from n2's copy.
  clear_mirror_stale(p, "n2");
  p.version = 3;
  acts = run_placed(m, 3050, 5000, {{"n1", {1}}, {"n4", {4}}}, &p);
  EXPECT_TRUE(has(acts, Kind::Serve, 2, "n2"));
  EXPECT_TRUE(m.serving(2, 5000));
}

TEST(ClusterMember, AStaleMarkSeenOnlyAfterTheGrantStillStopsTheTakeover) {
  ClusterMemberConfig c = n3();
  c.placement_from_authority = true;
  ClusterMember m(c, 1, 0);
  Placement p = initial_placement({{"evs1", "n1"}, {"evs2", "n2"}, {"evs3", "n3"}, {"evs4", "n4"}},
                                  {{1, "evs1"}, {2, "evs2"}, {3, "evs3"}, {4, "evs4"}});
  p.version = 1;
  run_placed(m, 0, 400, {{"n1", {1}}, {"n2", {2}}, {"n4", {4}}}, &p);
  // n2 falls silent; its lease of volume 2 is granted here before any read shows the mark.
  std::vector<MemberAction> acts;
  Placement marked = p;
  ASSERT_EQ(mark_mirror_stale(marked, "n2", "n3", 5), "");
  marked.version = 2;
  for (int64_t t = 450; t <= 3000; t += 50) {
    m.heartbeat_received(t, beat("n1", {1}));
    m.heartbeat_received(t, beat("n4", {4}));
    m.tick(t);
    for (size_t i = 0; i < 50; ++i) {
      auto batch = m.take_actions();
      if (batch.empty()) break;
      for (const auto& a : batch) {
        acts.push_back(a);
        if (a.kind == Kind::AcquireLease)
          m.lease_answered(t, a.volume, a.request, {LeaseVerdict::Granted, {}, ""});
        // Reads sent before the grant of volume 2 answer the old record; later ones the mark.
        if (a.kind == Kind::ReadPlacement)
          m.placement_read(t, a.request, true, has(acts, Kind::AcquireLease, 2) ? marked : p);
      }
    }
  }
  EXPECT_TRUE(has(acts, Kind::AcquireLease, 2));
  EXPECT_FALSE(has(acts, Kind::Serve, 2));
  EXPECT_TRUE(has(acts, Kind::ReleaseLease, 2));
}

}  // namespace
}  // namespace nasd::membership
