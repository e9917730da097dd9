// EtcdPlacementStore against a real etcd (each test starts its own in a private namespace): the
// placement record's compare-and-swap on its mod_revision, and a hand-over written only while
// the volume's lease key is the one the holder created (its epoch).
#include "cluster/membership/etcd_placement_store.h"

#include <gtest/gtest.h>

#include "cluster/membership/etcd_lease_authority.h"
#include "tests/cluster/etcd_process.h"

namespace nasd::membership {
namespace {

using namespace std::chrono_literals;
using cluster::testing::EtcdProcess;

EtcdOptions options_for(std::vector<std::string> endpoints) {
  EtcdOptions o;
  o.value_key = std::vector<uint8_t>(32, 0x6b);  // the cluster key
  o.endpoints = std::move(endpoints);
  o.prefix = "/nasd/test/";
  o.timeout = 1500ms;
  return o;
}

Placement two_evs() {
  return initial_placement({{"evs1", "n1"}, {"evs2", "n2"}}, {{0, "evs1"}, {1, "evs2"}});
}

TEST(EtcdPlacementStore, CompareAndSwapAndAHandOverOnlyUnderTheLease) {
  EtcdProcess etcd(1, 2379);
  ASSERT_TRUE(etcd.start()) << "etcd did not start";
  EtcdPlacementStore a(options_for(etcd.endpoints())), b(options_for(etcd.endpoints()));
  EtcdLeaseAuthority leases(options_for(etcd.endpoints()));
  std::string error;
  Placement p;
  bool found = true;
  ASSERT_TRUE(a.read(&p, &found, &error)) << error;
  EXPECT_FALSE(found);

  // Created once: the second creator loses and reads the first's.
  Placement first = two_evs(), second = two_evs();
  ASSERT_EQ(a.write(first, &error), PlacementWrite::Written) << error;
  EXPECT_GT(first.version, 0u);
  EXPECT_EQ(b.write(second, &error), PlacementWrite::Conflict);
  ASSERT_TRUE(b.read(&p, &found, &error) && found) << error;
  EXPECT_TRUE(p == first);

  // A stale version is refused, the current one accepted.
  Placement moved = p;
  ASSERT_EQ(propose_evs_move(moved, "evs1", "n2", {"n1", "n2"}), "");
  Placement stale = moved;
  ASSERT_EQ(a.write(moved, &error), PlacementWrite::Written) << error;
  EXPECT_GT(moved.version, first.version);
  EXPECT_EQ(b.write(stale, &error), PlacementWrite::Conflict);

  // The hand-over: only under the lease of the volume, at its epoch.
  LeaseAnswer held = leases.acquire(0, "n1", 3000);
  ASSERT_EQ(held.verdict, LeaseVerdict::Granted) << held.error;
  Placement handed = moved;
  ASSERT_EQ(mark_handed(handed, 0), "");
  Placement wrong_epoch = handed;
  EXPECT_EQ(a.write_holding(wrong_epoch, 0, "n1", held.lease.epoch + 1, &error), PlacementWrite::Conflict);
  Placement other_volume = handed;
  EXPECT_EQ(a.write_holding(other_volume, 1, "n1", held.lease.epoch, &error), PlacementWrite::Conflict);
  ASSERT_EQ(a.write_holding(handed, 0, "n1", held.lease.epoch, &error), PlacementWrite::Written) << error;
  ASSERT_TRUE(b.read(&p, &found, &error)) << error;
  EXPECT_EQ(p.designated(0), "n2");  // its EVS's only volume: committed
  EXPECT_FALSE(p.moving(0));

  // Released: the epoch no longer names a live key, so a late hand-over is refused.
  ASSERT_TRUE(leases.release(0, "n1"));
  ASSERT_EQ(propose_volume_move(p, 0, "evs2"), "");
  ASSERT_EQ(a.write(p, &error), PlacementWrite::Written) << error;
  Placement late = p;
  ASSERT_EQ(mark_handed(late, 0), "");
  EXPECT_EQ(a.write_holding(late, 0, "n1", held.lease.epoch, &error), PlacementWrite::Conflict);
}

TEST(EtcdPlacementStore, AnUnreachableEtcdIsNeverAWrite) {
  EtcdPlacementStore a(options_for({"http://127.0.0.1:2399"}));
  std::string error;
  Placement p = two_evs();
  bool found = false;
  EXPECT_FALSE(a.read(&p, &found, &error));
  EXPECT_EQ(a.write(p, &error), PlacementWrite::Unreachable);
}

// The stale-mirror mark (stale_mirror_gate.h) goes through the same record in etcd: stored by
// one node, seen by the other, cleared.
TEST(EtcdPlacementStore, AStaleMirrorMarkIsStoredSeenAndCleared) {
  EtcdProcess etcd(1, 2379);
  ASSERT_TRUE(etcd.start()) << "etcd did not start";
  EtcdPlacementStore a(options_for(etcd.endpoints())), b(options_for(etcd.endpoints()));
  Placement written, seen;
  ASSERT_EQ(update_placement(a, two_evs(),
                             [](Placement& p) { return mark_mirror_stale(p, "n1", "n2", 4096); },
                             &written),
            "");
  std::string error;
  bool found = false;
  ASSERT_TRUE(b.read(&seen, &found, &error) && found) << error;
  ASSERT_TRUE(seen.mirror_stale("n1"));
  EXPECT_EQ(seen.stale_mirrors.at("n1").partner, "n2");
  EXPECT_EQ(seen.stale_mirrors.at("n1").since, 4096u);
  ASSERT_EQ(update_placement(b, two_evs(), [](Placement& p) { return clear_mirror_stale(p, "n1"); },
                             &written),
            "");
  ASSERT_TRUE(a.read(&seen, &found, &error) && found) << error;
  EXPECT_FALSE(seen.mirror_stale("n1"));
}

}  // namespace
}  // namespace nasd::membership
