// Directed scenarios for the HA pair, which is a ring of two ClusterMembers (a covers b, b
// covers a), driven by hand (the random ones are ClusterSimulation.TwoNodeRing* in
// cluster_simulation_test.cc).
#include "cluster/membership/cluster_member.h"

#include <gtest/gtest.h>

#include <functional>

namespace nasd::membership {
namespace {

using Kind = MemberAction::Kind;

ClusterMemberConfig config_a() {
  ClusterMemberConfig c;
  c.self = "a";
  c.peers = {"b"};
  c.home = {{1, "a"}, {2, "b"}};
  c.covers = {"b"};
  c.heartbeat_interval_ms = 200;
  c.missed_heartbeats = 5;  // suspected after 1000 ms of silence
  c.lease_ms = 3000;
  c.renew_after_ms = 800;
  c.safety_margin_ms = 500;  // trusted for 2500 ms after a request is sent
  c.retry_ms = 300;
  return c;
}

std::optional<MemberAction> find(const std::vector<MemberAction>& acts, Kind kind,
                               uint32_t volume = 0) {
  for (const auto& a : acts) {
    if (a.kind == kind && (kind == Kind::SendHeartbeat || a.volume == volume)) return a;
  }
  return std::nullopt;
}

LeaseAnswer answer(LeaseVerdict v) { return {v, {}, ""}; }

Heartbeat from_b(uint64_t incarnation = 1, std::vector<uint32_t> holding = {2},
                 bool wants_failback = false) {
  return {"b", incarnation, 1, std::move(holding), wants_failback};
}

using Verdicts = std::function<LeaseVerdict(uint32_t volume)>;

// The authority answers `v` for every volume.
Verdicts all(LeaseVerdict v) {
  return [v](uint32_t) { return v; };
}
// a's own volume 1 is granted; the partner's volume 2 gets `v`.
Verdicts partner_volume(LeaseVerdict v) {
  return [v](uint32_t volume) { return volume == 2 ? v : LeaseVerdict::Granted; };
}

// Ticks every 50 ms from `from` to `to`, keeping b's heartbeats coming if `b_alive`, and
// answering every lease request at once as `verdict` says. Returns all actions.
std::vector<MemberAction> run(ClusterMember& m, int64_t from, int64_t to, bool b_alive,
                            const Verdicts& verdict) {
  std::vector<MemberAction> all;
  for (int64_t t = from; t <= to; t += 50) {
    if (b_alive && t % 200 == 0) m.heartbeat_received(t, from_b());
    m.tick(t);
    for (const auto& a : m.take_actions()) {
      all.push_back(a);
      if (a.kind == Kind::AcquireLease) m.lease_answered(t, a.volume, a.request, answer(verdict(a.volume)));
    }
    for (const auto& a : m.take_actions()) all.push_back(a);
  }
  return all;
}

TEST(TwoNodeRing, StartsByAcquiringAndServingItsHomeVolumes) {
  ClusterMember m(config_a(), 1, 0);
  m.tick(0);
  auto acts = m.take_actions();
  ASSERT_TRUE(find(acts, Kind::SendHeartbeat));
  auto acquire = find(acts, Kind::AcquireLease, 1);
  ASSERT_TRUE(acquire);
  EXPECT_FALSE(find(acts, Kind::AcquireLease, 2));  // partner's volume: not while it may be up
  EXPECT_EQ(m.state(), MemberState::Starting);

  m.lease_answered(10, 1, acquire->request, answer(LeaseVerdict::Granted));
  EXPECT_TRUE(find(m.take_actions(), Kind::Serve, 1));
  EXPECT_TRUE(m.may_serve(1, 10));
  EXPECT_FALSE(m.serving(1, 10));  // not opened yet
  m.volume_ready(20, 1);
  EXPECT_TRUE(m.serving(1, 20));
  // Trusted until sent + lease - margin, not a moment longer.
  EXPECT_TRUE(m.may_serve(1, 2499));
  EXPECT_FALSE(m.may_serve(1, 2500));

  m.heartbeat_received(100, from_b());
  EXPECT_EQ(m.state(), MemberState::Normal);
}

TEST(TwoNodeRing, RenewsWellBeforeTrustRunsOut) {
  ClusterMember m(config_a(), 1, 0);
  auto acts = run(m, 0, 0, true, all(LeaseVerdict::Granted));
  ASSERT_TRUE(find(acts, Kind::Serve, 1));
  acts = run(m, 50, 750, true, all(LeaseVerdict::Granted));
  EXPECT_FALSE(find(acts, Kind::AcquireLease, 1));
  acts = run(m, 800, 800, true, all(LeaseVerdict::Granted));
  EXPECT_TRUE(find(acts, Kind::AcquireLease, 1));
  EXPECT_TRUE(m.may_serve(1, 3299));  // renewal sent at 800
  acts = run(m, 850, 20000, true, all(LeaseVerdict::Granted));
  EXPECT_FALSE(find(acts, Kind::Unserve, 1));
  EXPECT_TRUE(m.may_serve(1, 20000));
}

TEST(TwoNodeRing, StopsServingWhenTheAuthorityIsUnreachable) {
  ClusterMember m(config_a(), 1, 0);
  run(m, 0, 0, true, all(LeaseVerdict::Granted));
  m.volume_ready(0, 1);
  // Every renewal fails from now on.
  auto acts = run(m, 50, 2450, true, all(LeaseVerdict::Unreachable));
  EXPECT_FALSE(find(acts, Kind::Unserve, 1));
  EXPECT_TRUE(m.may_serve(1, 2450));
  acts = run(m, 2500, 2500, true, all(LeaseVerdict::Unreachable));
  EXPECT_TRUE(find(acts, Kind::Unserve, 1));
  EXPECT_FALSE(m.may_serve(1, 2500));
  run(m, 2550, 3100, true, all(LeaseVerdict::Unreachable));
  EXPECT_FALSE(m.heartbeat().wants_failback);  // asking would be pointless without storage
}

TEST(TwoNodeRing, SilentPartnerIsFencedThenTakenOver) {
  ClusterMember m(config_a(), 1, 0);
  auto acts = run(m, 0, 400, true, all(LeaseVerdict::Granted));
  EXPECT_EQ(m.state(), MemberState::Normal);
  EXPECT_FALSE(find(acts, Kind::AcquireLease, 2));
  // b's last heartbeat is at 400: not suspected before 1400.
  acts = run(m, 450, 1350, false, partner_volume(LeaseVerdict::HeldByOther));
  EXPECT_EQ(m.state(), MemberState::Normal);
  EXPECT_FALSE(find(acts, Kind::AcquireLease, 2));
  // While b still renews its lease, the authority refuses us.
  acts = run(m, 1400, 1650, false, partner_volume(LeaseVerdict::HeldByOther));
  EXPECT_EQ(m.state(), MemberState::Covering);
  EXPECT_TRUE(find(acts, Kind::AcquireLease, 2));
  EXPECT_FALSE(find(acts, Kind::Serve, 2));
  EXPECT_FALSE(m.may_serve(2, 1650));
  EXPECT_TRUE(m.may_serve(1, 1650));  // refusals for the partner's volume do not touch ours

  // b's lease lapses; the next attempt is granted.
  acts = run(m, 1700, 2000, false, partner_volume(LeaseVerdict::Granted));
  ASSERT_TRUE(find(acts, Kind::Serve, 2));
  EXPECT_EQ(m.state(), MemberState::Covering);
  EXPECT_FALSE(m.serving(2, 2000));
  m.volume_ready(2000, 2);
  EXPECT_EQ(m.state(), MemberState::Covering);
  EXPECT_TRUE(m.serving(2, 2000));
  auto hb = m.heartbeat();
  EXPECT_EQ(hb.holding, (std::vector<uint32_t>{1, 2}));
}

TEST(TwoNodeRing, FailbackClosesThenReleases) {
  ClusterMember m(config_a(), 1, 0);
  run(m, 0, 400, true, all(LeaseVerdict::Granted));
  run(m, 450, 1800, false, all(LeaseVerdict::Granted));
  m.volume_ready(1800, 2);
  ASSERT_EQ(m.state(), MemberState::Covering);
  ASSERT_TRUE(m.serving(2, 1800));
  uint64_t view = m.view();

  // b restarted and wants its volume back.
  m.heartbeat_received(1900, from_b(2, {}, true));
  auto acts = m.take_actions();
  EXPECT_TRUE(find(acts, Kind::Unserve, 2));
  EXPECT_FALSE(find(acts, Kind::ReleaseLease, 2));  // not before the volume is drained
  EXPECT_EQ(m.state(), MemberState::HandingBack);
  EXPECT_GT(m.view(), view);
  EXPECT_FALSE(m.serving(2, 1900));
  EXPECT_TRUE(m.may_serve(2, 1900));  // still flushing under its lease

  m.volume_closed(2000, 2);
  acts = m.take_actions();
  EXPECT_TRUE(find(acts, Kind::ReleaseLease, 2));
  EXPECT_FALSE(m.may_serve(2, 2000));
  m.heartbeat_received(2100, from_b(2, {2}, false));
  EXPECT_EQ(m.state(), MemberState::Normal);
  acts = run(m, 2150, 5000, true, all(LeaseVerdict::Granted));
  EXPECT_FALSE(find(acts, Kind::AcquireLease, 2));
}

TEST(TwoNodeRing, PlannedFailoverDrainsAndReleasesHomeVolumesUntilFailback) {
  ClusterMemberConfig c = config_a();
  c.auto_failback = false;  // failback on command, as the daemon runs by default
  ClusterMember m(c, 1, 0);
  run(m, 0, 400, true, all(LeaseVerdict::Granted));
  m.volume_ready(400, 1);
  ASSERT_TRUE(m.serving(1, 400));

  m.request_failover(450);
  auto acts = m.take_actions();
  EXPECT_TRUE(find(acts, Kind::Unserve, 1));
  EXPECT_FALSE(find(acts, Kind::ReleaseLease, 1));  // drained first
  EXPECT_TRUE(m.may_serve(1, 450));
  m.volume_closed(500, 1);
  EXPECT_TRUE(find(m.take_actions(), Kind::ReleaseLease, 1));
  EXPECT_FALSE(m.heartbeat().wants_failback);
  // While on standby it neither asks for its volume nor tries to acquire it.
  acts = run(m, 550, 3000, true, all(LeaseVerdict::Granted));
  EXPECT_FALSE(find(acts, Kind::AcquireLease, 1));
  EXPECT_TRUE(m.heartbeat().holding.empty());

  // Failback: it asks for the lease again (refused while the partner still holds it) and, having
  // reached the authority, tells the partner it wants the volume back.
  m.request_failback(3050, true);
  acts = run(m, 3100, 3500, true, all(LeaseVerdict::HeldByOther));
  EXPECT_TRUE(find(acts, Kind::AcquireLease, 1));
  EXPECT_TRUE(m.heartbeat().wants_failback);
  acts = run(m, 3550, 4000, true, all(LeaseVerdict::Granted));
  EXPECT_TRUE(find(acts, Kind::Serve, 1));
  // The command is spent once the volume is back: losing it again waits for the next one.
  m.volume_ready(4000, 1);
  acts = run(m, 4050, 8000, true, [](uint32_t v) {
    return v == 1 ? LeaseVerdict::HeldByOther : LeaseVerdict::Granted;  // the partner took it
  });
  EXPECT_TRUE(find(acts, Kind::Unserve, 1));
  EXPECT_FALSE(m.heartbeat().wants_failback);
}

TEST(TwoNodeRing, APartnerNeverHeardFromIsLeftAloneDuringTheStartupGrace) {
  ClusterMemberConfig c = config_a();
  c.startup_grace_ms = 5000;
  ClusterMember m(c, 1, 0);
  auto acts = run(m, 0, 4900, false, all(LeaseVerdict::Granted));
  EXPECT_FALSE(find(acts, Kind::AcquireLease, 2));
  acts = run(m, 4950, 6000, false, all(LeaseVerdict::Granted));
  EXPECT_TRUE(find(acts, Kind::AcquireLease, 2)) << "the grace never ended";
}

TEST(TwoNodeRing, GrantArrivingAfterFailbackWasAskedIsGivenBack) {
  ClusterMember m(config_a(), 1, 0);
  run(m, 0, 400, true, all(LeaseVerdict::Granted));
  std::optional<MemberAction> pending;
  for (int64_t t = 450; t <= 1600 && !pending; t += 50) {
    m.tick(t);
    for (const auto& a : m.take_actions()) {
      if (a.kind == Kind::AcquireLease && a.volume == 2) pending = a;
      else if (a.kind == Kind::AcquireLease) m.lease_answered(t, a.volume, a.request, answer(LeaseVerdict::Granted));
    }
  }
  ASSERT_TRUE(pending);
  m.heartbeat_received(1650, from_b(2, {}, true));  // b is back before the answer comes
  m.take_actions();
  m.lease_answered(1700, 2, pending->request, answer(LeaseVerdict::Granted));
  auto acts = m.take_actions();
  EXPECT_TRUE(find(acts, Kind::ReleaseLease, 2));
  EXPECT_FALSE(find(acts, Kind::Serve, 2));
  EXPECT_FALSE(m.may_serve(2, 1700));
}

TEST(TwoNodeRing, StaleGrantIsIgnoredAndReturned) {
  ClusterMember m(config_a(), 1, 0);
  m.tick(0);
  m.take_actions();
  m.lease_answered(10, 2, 999, answer(LeaseVerdict::Granted));
  EXPECT_TRUE(find(m.take_actions(), Kind::ReleaseLease, 2));
  EXPECT_FALSE(m.may_serve(2, 10));
}

TEST(TwoNodeRing, RestartedNodeAsksForFailbackOnlyWhenItCanReachTheAuthority) {
  ClusterMember m(config_a(), 2, 0);
  run(m, 0, 600, true, all(LeaseVerdict::Unreachable));
  EXPECT_FALSE(m.heartbeat().wants_failback);
  run(m, 650, 1000, true, all(LeaseVerdict::HeldByOther));  // b holds our volume
  EXPECT_TRUE(m.heartbeat().wants_failback);
  EXPECT_FALSE(m.may_serve(1, 1000));
}

TEST(TwoNodeRing, HeartbeatsFromStrangersAreIgnored) {
  ClusterMember m(config_a(), 1, 0);
  m.heartbeat_received(10, {"c", 1, 1, {}, false});
  EXPECT_EQ(m.state(), MemberState::Starting);
  m.tick(1000);
  EXPECT_EQ(m.state(), MemberState::Covering);
}

TEST(TwoNodeRing, ValidationNamesTheProblem) {
  EXPECT_EQ(validate(config_a()), "");
  ClusterMemberConfig c = config_a();
  c.peers = {"a"};
  EXPECT_NE(validate(c), "");
  c = config_a();
  c.lease_ms = 1500;  // 800 + 300 >= 1500 - 500
  EXPECT_NE(validate(c).find("lease too short"), std::string::npos);
  c = config_a();
  c.covers = {"c"};
  EXPECT_NE(validate(c).find("not a peer"), std::string::npos);
  c = config_a();
  c.home[3] = "c";
  EXPECT_NE(validate(c).find("unknown node"), std::string::npos);
}

}  // namespace
}  // namespace nasd::membership
