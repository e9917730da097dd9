// The placement record (cluster/membership/placement.h): its rules (propose, hand over, commit,
// cancel), its text form and the decoder's bounds, the file store's compare-and-swap and its
// lease check, and one planned move through a ClusterMember driven by hand.
#include "cluster/membership/placement.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "cluster/membership/cluster_member.h"
#include "cluster/membership/file_lease_authority.h"
#include "cluster/membership/file_placement_store.h"
#include "tests/cluster/member_driver.h"
#include "tests/cluster/scratch_dir.h"

namespace nasd::membership {
namespace {

const std::vector<std::string> kNodes = {"n1", "n2", "n3"};

Placement three_evs() {
  return initial_placement({{"evs1", "n1"}, {"evs2", "n2"}, {"evs3", "n3"}},
                           {{0, "evs1"}, {1, "evs1"}, {2, "evs2"}, {3, "evs3"}});
}

TEST(Placement, AnEvsMoveCommitsWhenEveryVolumeIsHandedOver) {
  Placement p = three_evs();
  ASSERT_EQ(propose_evs_move(p, "evs1", "n3", kNodes), "");
  EXPECT_EQ(p.designated(0), "n1");  // nothing moves before the hand-over
  EXPECT_EQ(p.destination(0), "n3");
  EXPECT_EQ(p.unit(0), (std::vector<uint32_t>{0, 1}));
  EXPECT_FALSE(p.moving(2));
  ASSERT_EQ(mark_handed(p, 1), "");
  EXPECT_TRUE(p.handed(1));
  EXPECT_EQ(p.designated(1), "n1");
  ASSERT_EQ(mark_handed(p, 0), "");
  EXPECT_EQ(p.designated(0), "n3");
  EXPECT_EQ(p.designated(1), "n3");
  EXPECT_FALSE(p.moving(0) || p.handed(0) || p.handed(1));
  EXPECT_TRUE(p.pending_moves().empty());
}

TEST(Placement, AVolumeMoveChangesItsEvsAlone) {
  Placement p = three_evs();
  ASSERT_EQ(propose_volume_move(p, 0, "evs2"), "");
  EXPECT_EQ(p.destination(0), "n2");
  EXPECT_FALSE(p.moving(1));
  ASSERT_EQ(mark_handed(p, 0), "");
  EXPECT_EQ(p.volumes.at(0).evs, "evs2");
  EXPECT_EQ(p.designated(0), "n2");
  EXPECT_EQ(p.volumes_of("evs2"), (std::vector<uint32_t>{0, 2}));
}

TEST(Placement, ConflictingOrPointlessMovesAreRefused) {
  Placement p = three_evs();
  EXPECT_NE(propose_evs_move(p, "evs9", "n2", kNodes), "");
  EXPECT_NE(propose_evs_move(p, "evs1", "n9", kNodes), "");
  EXPECT_NE(propose_evs_move(p, "evs1", "n1", kNodes), "");
  EXPECT_NE(propose_volume_move(p, 0, "evs1"), "");
  EXPECT_NE(propose_volume_move(p, 7, "evs2"), "");
  ASSERT_EQ(propose_evs_move(p, "evs1", "n2", kNodes), "");
  EXPECT_NE(propose_evs_move(p, "evs1", "n3", kNodes), "");  // already moving
  EXPECT_NE(propose_volume_move(p, 0, "evs3"), "");          // its evs moves
  EXPECT_NE(propose_volume_move(p, 2, "evs1"), "");          // into a moving evs
  ASSERT_EQ(propose_volume_move(p, 2, "evs3"), "");
  EXPECT_NE(propose_evs_move(p, "evs3", "n1", kNodes), "");  // a volume moves into it
  EXPECT_NE(mark_handed(p, 3), "");                          // not moving
}

TEST(Placement, CancelLeavesHandedVolumesWithTheirNode) {
  Placement p = three_evs();
  ASSERT_EQ(propose_evs_move(p, "evs1", "n2", kNodes), "");
  ASSERT_EQ(mark_handed(p, 0), "");
  ASSERT_EQ(cancel_evs_move(p, "evs1"), "");
  EXPECT_EQ(p.designated(0), "n1");
  EXPECT_FALSE(p.handed(0) || p.moving(0));
  EXPECT_NE(cancel_evs_move(p, "evs1"), "");
  ASSERT_EQ(propose_volume_move(p, 3, "evs1"), "");
  ASSERT_EQ(cancel_volume_move(p, 3), "");
  EXPECT_EQ(p.designated(3), "n3");
}

TEST(Placement, AnEmptyEvsMovesAtOnce) {
  Placement p = three_evs();
  ASSERT_EQ(propose_volume_move(p, 3, "evs2"), "");
  ASSERT_EQ(mark_handed(p, 3), "");
  ASSERT_EQ(propose_evs_move(p, "evs3", "n1", kNodes), "");
  EXPECT_EQ(p.evs.at("evs3").node, "n1");
  EXPECT_TRUE(p.pending_moves().empty());
}

TEST(Placement, TextRoundTripsAndTheDecoderRefusesWhatIsNotARecord) {
  Placement p = three_evs();
  ASSERT_EQ(propose_evs_move(p, "evs1", "n3", kNodes), "");
  ASSERT_EQ(mark_handed(p, 0), "");
  ASSERT_EQ(propose_volume_move(p, 2, "evs3"), "");
  Placement back;
  std::string error;
  ASSERT_TRUE(decode_placement(encode_placement(p), &back, &error)) << error;
  EXPECT_TRUE(back == p);
  for (const std::string& bad : {
           std::string(""), std::string("nasd-placement 2\n"),
           std::string("nasd-placement 1\nevs e1 n1\n"),
           std::string("nasd-placement 1\nevs e1 n1 -\nevs e1 n2 -\n"),
           std::string("nasd-placement 1\nvolume 0 e1 - -\n"),                      // unknown evs
           std::string("nasd-placement 1\nevs e1 n1 -\nvolume 0 e1 - handed\n"),   // handed, not moving
           std::string("nasd-placement 1\nevs e1 n1 -\nvolume 01 e1 - -\n"),
           std::string("nasd-placement 1\nevs e1 n1 -\nvolume 4294967296 e1 - -\n"),
           std::string("nasd-placement 1\nevs e1 n1 n1\n"),
           std::string("nasd-placement 1\nevs e1 n1 -\nbogus\n"),
           std::string("nasd-placement 1\nevs ") + std::string(100, 'x') + " n1 -\n",
           std::string("nasd-placement 1\n") + std::string(kMaxPlacementBytes, '\n'),
       })
    EXPECT_FALSE(decode_placement(bad, &back, &error)) << bad;
}

TEST(Placement, ReconcileFollowsTheConfigAndKeepsTheMoves) {
  Placement stored = three_evs();
  stored.version = 7;
  ASSERT_EQ(propose_evs_move(stored, "evs1", "n2", kNodes), "");
  ASSERT_EQ(mark_handed(stored, 0), "");
  ASSERT_EQ(mark_handed(stored, 1), "");
  Placement config = initial_placement({{"evs1", "n1"}, {"evs2", "n2"}},
                                       {{0, "evs1"}, {1, "evs1"}, {2, "evs2"}, {5, "evs2"}});
  Placement r = reconcile(stored, config);
  EXPECT_EQ(r.version, 7u);
  EXPECT_EQ(r.designated(0), "n2");  // the committed move stays
  EXPECT_EQ(r.designated(5), "n2");  // a new volume where the config puts it
  EXPECT_FALSE(r.has(3));            // gone from the config
  EXPECT_EQ(r.evs.count("evs3"), 0u);
}

TEST(FilePlacementStore, CompareAndSwapAndTheLeaseCheck) {
  cluster::testing::ScratchDir dir("nasd-placement");
  int64_t now = 1000;
  FileLeaseAuthority leases(dir.path, [&] { return now; });
  FilePlacementStore store(dir.path, [&] { return now; });
  Placement p;
  bool found = true;
  std::string error;
  ASSERT_TRUE(store.read(&p, &found, &error)) << error;
  EXPECT_FALSE(found);
  Placement first = three_evs();
  ASSERT_EQ(store.write(first, &error), PlacementWrite::Written) << error;
  EXPECT_EQ(first.version, 1u);
  Placement stale = three_evs();  // version 0: the record exists now
  EXPECT_EQ(store.write(stale, &error), PlacementWrite::Conflict);
  ASSERT_TRUE(store.read(&p, &found, &error) && found);
  EXPECT_TRUE(p == first);

  ASSERT_EQ(propose_evs_move(p, "evs1", "n2", kNodes), "");
  ASSERT_EQ(store.write(p, &error), PlacementWrite::Written);
  ASSERT_EQ(leases.acquire(0, "n1", 3000).verdict, LeaseVerdict::Granted);
  Lease lease;
  ASSERT_TRUE(leases.inspect(0, &lease, &error));
  Placement handed = p;
  ASSERT_EQ(mark_handed(handed, 0), "");
  // Not the holder, or not its epoch, or an expired lease: refused.
  EXPECT_EQ(store.write_holding(handed, 0, "n3", lease.epoch, &error), PlacementWrite::Conflict);
  EXPECT_EQ(store.write_holding(handed, 0, "n1", lease.epoch + 1, &error), PlacementWrite::Conflict);
  now += 5000;
  EXPECT_EQ(store.write_holding(handed, 0, "n1", lease.epoch, &error), PlacementWrite::Conflict);
  now -= 5000;
  ASSERT_EQ(store.write_holding(handed, 0, "n1", lease.epoch, &error), PlacementWrite::Written) << error;
  ASSERT_TRUE(store.read(&p, &found, &error));
  EXPECT_TRUE(p.handed(0));
  EXPECT_EQ(p.version, handed.version);

  std::ofstream(dir.path + "/placement") << "version 9\nnasd-placement 1\nevs e1\n";
  EXPECT_FALSE(store.read(&p, &found, &error));
}

// ---- one planned move through the state machine ----

ClusterMemberConfig member(const std::string& self) {
  ClusterMemberConfig c;
  c.self = self;
  for (const std::string n : {"n1", "n2", "n3"})
    if (n != self) c.peers.push_back(n);
  c.home = {{0, "n1"}, {1, "n1"}, {2, "n2"}, {3, "n3"}};
  c.covers = {self == "n1" ? "n3" : self == "n2" ? "n1" : "n2"};
  c.heartbeat_interval_ms = 200;
  c.lease_ms = 3000;
  c.renew_after_ms = 800;
  c.safety_margin_ms = 500;
  c.retry_ms = 300;
  c.placement_from_authority = true;
  return c;
}

using testing::drive;
using testing::has;

TEST(ClusterMemberMoves, NothingIsAcquiredBeforeThePlacementIsRead) {
  ClusterMember m(member("n1"), 1, 0);
  m.tick(0);
  auto acts = m.take_actions();
  EXPECT_FALSE(has(acts, MemberAction::Kind::AcquireLease, 0));
  EXPECT_TRUE(has(acts, MemberAction::Kind::ReadPlacement, 0));
}

TEST(ClusterMemberMoves, TheSourceClosesHandsOverAndReleasesTheTargetOpensWithoutReplay) {
  Placement p = three_evs();
  p.version = 1;
  ClusterMember src(member("n1"), 1, 0);
  ClusterMember dst(member("n3"), 1, 0);
  const auto answer_reads = [&p](ClusterMember& m, int64_t t, std::vector<MemberAction>& acts) {
    for (const auto& a : acts)
      if (a.kind == MemberAction::Kind::ReadPlacement) m.placement_read(t, a.request, true, p);
  };
  // n1 takes and opens v0 (its own: no replay) once a read after the grant confirms it.
  src.tick(0);
  auto acts = src.take_actions();
  answer_reads(src, 0, acts);
  acts = src.take_actions();
  uint64_t req = 0;
  for (const auto& a : acts)
    if (a.kind == MemberAction::Kind::AcquireLease && a.volume == 0) req = a.request;
  ASSERT_NE(req, 0u);
  src.lease_answered(10, 0, req, {LeaseVerdict::Granted, {"n1", 5, 3000}, ""});
  acts = src.take_actions();
  EXPECT_FALSE(has(acts, MemberAction::Kind::Serve, 0));  // not before the read
  answer_reads(src, 20, acts);
  acts = src.take_actions();
  ASSERT_TRUE(has(acts, MemberAction::Kind::Serve, 0));
  for (const auto& a : acts)
    if (a.kind == MemberAction::Kind::Serve) {
      EXPECT_EQ(a.node, "");
    }
  src.volume_ready(30, 0);

  // The admin moves evs1 to n3: n1 drains v0 (Unserve) ...
  ASSERT_EQ(propose_evs_move(p, "evs1", "n3", kNodes), "");
  p.version = 2;
  src.placement_changed(100, p);
  acts = src.take_actions();
  ASSERT_TRUE(has(acts, MemberAction::Kind::Unserve, 0));
  EXPECT_FALSE(has(acts, MemberAction::Kind::ReleaseLease, 0));
  // ... a failed flush is not handed over: it serves again from its own NVRAM ...
  src.volume_closed(150, 0, false);
  acts = src.take_actions();
  EXPECT_TRUE(has(acts, MemberAction::Kind::Serve, 0));
  EXPECT_FALSE(has(acts, MemberAction::Kind::HandOver, 0));
  src.volume_ready(160, 0);
  // ... and a clean close is, under its lease epoch; the lease goes only after the mark.
  src.tick(600);
  acts = src.take_actions();
  ASSERT_TRUE(has(acts, MemberAction::Kind::Unserve, 0));
  src.volume_closed(650, 0, true);
  acts = src.take_actions();
  uint64_t handover = 0;
  for (const auto& a : acts)
    if (a.kind == MemberAction::Kind::HandOver) {
      handover = a.request;
      EXPECT_EQ(a.epoch, 5u);
    }
  ASSERT_NE(handover, 0u);
  EXPECT_FALSE(has(acts, MemberAction::Kind::ReleaseLease, 0));
  ASSERT_EQ(mark_handed(p, 0), "");
  p.version = 3;
  src.placement_changed(700, p);
  src.handover_answered(700, 0, handover, true);
  acts = src.take_actions();
  EXPECT_TRUE(has(acts, MemberAction::Kind::ReleaseLease, 0));
  EXPECT_FALSE(src.may_serve(0, 700));

  // Committed (v1 handed too): n3 is designated, acquires, and opens with nothing to replay.
  ASSERT_EQ(mark_handed(p, 1), "");
  p.version = 4;
  dst.tick(800);
  acts = dst.take_actions();
  answer_reads(dst, 800, acts);
  acts = dst.take_actions();
  req = 0;
  for (const auto& a : acts)
    if (a.kind == MemberAction::Kind::AcquireLease && a.volume == 0) req = a.request;
  ASSERT_NE(req, 0u);
  dst.lease_answered(810, 0, req, {LeaseVerdict::Granted, {"n3", 9, 4000}, ""});
  acts = dst.take_actions();
  answer_reads(dst, 820, acts);
  acts = dst.take_actions();
  bool served = false;
  for (const auto& a : acts)
    if (a.kind == MemberAction::Kind::Serve && a.volume == 0) {
      served = true;
      EXPECT_EQ(a.node, "");
    }
  EXPECT_TRUE(served);
  // The old node no longer wants it, even though it is alive.
  src.placement_changed(900, p);
  src.tick(900);
  EXPECT_FALSE(has(src.take_actions(), MemberAction::Kind::AcquireLease, 0));
}

// Leases are granted but for `held_elsewhere`, which another node holds.
testing::LeaseAnswers granted_but(const std::string& self, std::set<uint32_t> held_elsewhere) {
  return [self, held_elsewhere](uint32_t v) {
    const bool elsewhere = held_elsewhere.count(v) > 0;
    return LeaseAnswer{elsewhere ? LeaseVerdict::HeldByOther : LeaseVerdict::Granted,
                       {elsewhere ? "other" : self, 7, 3000}, ""};
  };
}

// v3 moves from n3 to n1 (evs1) while n2, which covers n1, watches. n1 is slow to take it up:
// first silent for longer than the failure timeout (a stall on a loaded machine; it still holds
// its own leases), then alive but not holding v3 yet. n2 must leave v3 alone for two leases
// after the commit -- a volume it took now would stay with it until a manual failback -- and
// only then rescue it from a node that never took it up.
TEST(ClusterMemberMoves, TheCoverLeavesAMovedVolumeToItsSlowNewNodeForTwoLeases) {
  Placement p = three_evs();
  p.version = 1;
  ClusterMember cover(member("n2"), 1, 0);
  drive(cover, 0, 7000, {{"n1", {0, 1}}, {"n3", {3}}}, granted_but("n2", {}), &p);
  ASSERT_TRUE(cover.serving(2, 7000));

  ASSERT_EQ(propose_volume_move(p, 3, "evs1"), "");
  ASSERT_EQ(mark_handed(p, 3), "");  // committed: n3 closed and released it
  p.version = 2;
  ASSERT_EQ(p.designated(3), "n1");
  const int64_t commit = 7050, two_leases = 2 * 3000;
  auto acts = drive(cover, commit, commit + 1500, {{"n3", {}}}, granted_but("n2", {0, 1}), &p);
  EXPECT_FALSE(has(acts, MemberAction::Kind::AcquireLease, 3)) << "took v3 while n1 stalled";
  acts = drive(cover, commit + 1550, commit + two_leases - 100, {{"n1", {0, 1}}, {"n3", {}}},
               granted_but("n2", {}), &p);
  EXPECT_FALSE(has(acts, MemberAction::Kind::AcquireLease, 3)) << "took v3 while n1 was picking it up";
  EXPECT_FALSE(cover.may_serve(3, commit + two_leases - 100));

  acts = drive(cover, commit + two_leases, commit + two_leases + 1500, {{"n1", {0, 1}}, {"n3", {}}},
               granted_but("n2", {}), &p);
  EXPECT_TRUE(has(acts, MemberAction::Kind::Serve, 3)) << "a node that never took up its moved volume kept it";
}

}  // namespace
}  // namespace nasd::membership
