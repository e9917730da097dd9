// EtcdLeaseAuthority against a real etcd (Debian's etcd-server) that each test starts and stops:
// grant, renewal, a holder refusing others, expiry and takeover with a larger epoch, release,
// an unreachable etcd, a three-member etcd losing members, and two nodes racing for one lease.
#include "cluster/membership/etcd_lease_authority.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/cluster/etcd_process.h"

namespace nasd::membership {
namespace {

using namespace std::chrono_literals;
using cluster::testing::EtcdProcess;

constexpr int kBasePort = 2379;  // private: the test runs in its own network namespace

EtcdOptions options_for(std::vector<std::string> endpoints, std::chrono::milliseconds timeout = 1500ms) {
  EtcdOptions o;
  o.value_key = std::vector<uint8_t>(32, 0x6b);  // the cluster key
  o.endpoints = std::move(endpoints);
  o.prefix = "/nasd/test/";
  o.timeout = timeout;
  return o;
}

class EtcdLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(etcd_.start()) << "etcd did not start"; }
  EtcdLeaseAuthority authority() { return EtcdLeaseAuthority(options_for(etcd_.endpoints())); }
  EtcdProcess etcd_{1, kBasePort};
};

TEST_F(EtcdLeaseTest, FirstComerGetsTheLeaseTheOtherIsRefused) {
  EtcdLeaseAuthority a = authority(), b = authority();
  const int64_t before = a.now_ms();
  LeaseAnswer got = a.acquire(7, "node-a", 3000);
  ASSERT_EQ(got.verdict, LeaseVerdict::Granted) << got.error;
  EXPECT_EQ(got.lease.holder, "node-a");
  EXPECT_GT(got.lease.epoch, 0u);
  // On this process's steady clock, from the request's start, less the skew margin.
  EXPECT_GE(got.lease.expires_ms, before + 3000 - EtcdLeaseAuthority::kSkewMarginMs);
  EXPECT_LE(got.lease.expires_ms, a.now_ms() + 3000);

  LeaseAnswer refused = b.acquire(7, "node-b", 3000);
  EXPECT_EQ(refused.verdict, LeaseVerdict::HeldByOther) << refused.error;
  EXPECT_EQ(refused.lease.holder, "node-a");
  EXPECT_EQ(refused.lease.epoch, got.lease.epoch);
  EXPECT_GT(refused.lease.expires_ms, b.now_ms());

  Lease seen;
  std::string error;
  ASSERT_TRUE(b.inspect(7, &seen, &error)) << error;
  EXPECT_EQ(seen.holder, "node-a");
  EXPECT_EQ(seen.epoch, got.lease.epoch);
  // Another volume is free.
  ASSERT_TRUE(b.inspect(8, &seen, &error)) << error;
  EXPECT_TRUE(seen.holder.empty());
}

TEST_F(EtcdLeaseTest, RenewalKeepsTheEpochAndOutlivesTheTtl) {
  EtcdLeaseAuthority a = authority(), b = authority();
  LeaseAnswer first = a.acquire(1, "node-a", 2000);
  ASSERT_EQ(first.verdict, LeaseVerdict::Granted) << first.error;
  // Renewed every 500 ms for 3 s, longer than the 2 s TTL: the lease never lapses.
  for (int i = 0; i < 6; ++i) {
    std::this_thread::sleep_for(500ms);
    LeaseAnswer renewed = a.acquire(1, "node-a", 2000);
    ASSERT_EQ(renewed.verdict, LeaseVerdict::Granted) << renewed.error;
    EXPECT_EQ(renewed.lease.epoch, first.lease.epoch);
    EXPECT_EQ(b.acquire(1, "node-b", 2000).verdict, LeaseVerdict::HeldByOther);
  }
  // A longer lease asked for: the key moves to a longer etcd lease, same epoch.
  const int64_t before = a.now_ms();
  LeaseAnswer longer = a.acquire(1, "node-a", 6000);
  ASSERT_EQ(longer.verdict, LeaseVerdict::Granted) << longer.error;
  EXPECT_EQ(longer.lease.epoch, first.lease.epoch);
  EXPECT_GE(longer.lease.expires_ms, before + 6000 - EtcdLeaseAuthority::kSkewMarginMs);
  std::this_thread::sleep_for(3000ms);  // past the old 2 s lease: still held
  EXPECT_EQ(b.acquire(1, "node-b", 2000).verdict, LeaseVerdict::HeldByOther);
}

TEST_F(EtcdLeaseTest, ExpiryHandsOverWithALargerEpoch) {
  EtcdLeaseAuthority a = authority(), b = authority();
  LeaseAnswer held = a.acquire(3, "node-a", 2000);
  ASSERT_EQ(held.verdict, LeaseVerdict::Granted) << held.error;
  const auto stopped = std::chrono::steady_clock::now();
  // node-a stops renewing; node-b is refused until etcd expires the lease, then gets it.
  LeaseAnswer taken;
  for (int i = 0; i < 100; ++i) {
    taken = b.acquire(3, "node-b", 2000);
    if (taken.verdict == LeaseVerdict::Granted) break;
    ASSERT_EQ(taken.verdict, LeaseVerdict::HeldByOther) << taken.error;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(taken.verdict, LeaseVerdict::Granted) << taken.error;
  EXPECT_GE(std::chrono::steady_clock::now() - stopped, 2000ms);  // never before the TTL
  EXPECT_GT(taken.lease.epoch, held.lease.epoch);
  // The old holder finds the lease gone.
  LeaseAnswer late = a.acquire(3, "node-a", 2000);
  EXPECT_EQ(late.verdict, LeaseVerdict::HeldByOther);
  EXPECT_EQ(late.lease.holder, "node-b");
  EXPECT_FALSE(a.release(3, "node-a"));
}

TEST_F(EtcdLeaseTest, ReleaseFreesAtOnceOnlyForTheHolder) {
  EtcdLeaseAuthority a = authority(), b = authority();
  uint64_t last_epoch = 0;
  // Handed back and forth: every new holder gets a larger epoch.
  for (int round = 0; round < 4; ++round) {
    EtcdLeaseAuthority& holder = round % 2 ? b : a;
    EtcdLeaseAuthority& other = round % 2 ? a : b;
    const std::string me = round % 2 ? "node-b" : "node-a";
    const std::string them = round % 2 ? "node-a" : "node-b";
    LeaseAnswer got = holder.acquire(5, me, 10000);
    ASSERT_EQ(got.verdict, LeaseVerdict::Granted) << got.error;
    EXPECT_GT(got.lease.epoch, last_epoch);
    last_epoch = got.lease.epoch;
    EXPECT_FALSE(other.release(5, them));  // not the holder: nothing happens
    EXPECT_EQ(other.acquire(5, them, 10000).verdict, LeaseVerdict::HeldByOther);
    EXPECT_TRUE(holder.release(5, me));
    EXPECT_FALSE(holder.release(5, me));  // already free
  }
  Lease seen;
  std::string error;
  ASSERT_TRUE(a.inspect(5, &seen, &error)) << error;
  EXPECT_TRUE(seen.holder.empty());
}

TEST_F(EtcdLeaseTest, UnreachableEtcdGrantsNothingAndAnswersInTime) {
  // Nothing listens there (the members are on kBasePort + 2i).
  EtcdLeaseAuthority nowhere(options_for({"http://127.0.0.1:" + std::to_string(kBasePort + 40)}, 500ms));
  auto t0 = std::chrono::steady_clock::now();
  LeaseAnswer a = nowhere.acquire(1, "node-a", 3000);
  EXPECT_EQ(a.verdict, LeaseVerdict::Unreachable);
  EXPECT_FALSE(a.error.empty());
  EXPECT_FALSE(nowhere.release(1, "node-a"));
  Lease seen;
  std::string error;
  EXPECT_FALSE(nowhere.inspect(1, &seen, &error));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3 * 700ms);

  // The real etcd stops while a lease is held: renewals are Unreachable, never Granted.
  EtcdLeaseAuthority held = authority();
  ASSERT_EQ(held.acquire(2, "node-a", 3000).verdict, LeaseVerdict::Granted);
  etcd_.stop();
  t0 = std::chrono::steady_clock::now();
  LeaseAnswer renew = held.acquire(2, "node-a", 3000);
  EXPECT_EQ(renew.verdict, LeaseVerdict::Unreachable);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2500ms);  // the 1.5 s timeout, and a bit
}

TEST_F(EtcdLeaseTest, InvalidNodeNamesAreRefused) {
  EtcdLeaseAuthority a = authority();
  EXPECT_EQ(a.acquire(1, "", 3000).verdict, LeaseVerdict::Unreachable);
  EXPECT_EQ(a.acquire(1, "two words", 3000).verdict, LeaseVerdict::Unreachable);
  EXPECT_EQ(a.acquire(1, std::string(300, 'x'), 3000).verdict, LeaseVerdict::Unreachable);
}

// Two nodes ask for the same free lease at the same instant, many times: etcd's transaction
// lets exactly one create the key.
TEST_F(EtcdLeaseTest, RacingContendersNeverBothGetTheLease) {
  EtcdLeaseAuthority a = authority(), b = authority();
  int a_won = 0, b_won = 0;
  for (uint32_t v = 100; v < 140; ++v) {
    std::atomic<int> ready{0};
    LeaseAnswer ra, rb;
    auto contend = [&](EtcdLeaseAuthority& auth, const char* name, LeaseAnswer* out) {
      ++ready;
      while (ready.load() < 2) {
      }
      *out = auth.acquire(v, name, 5000);
    };
    std::thread ta(contend, std::ref(a), "node-a", &ra);
    std::thread tb(contend, std::ref(b), "node-b", &rb);
    ta.join();
    tb.join();
    ASSERT_FALSE(ra.verdict == LeaseVerdict::Granted && rb.verdict == LeaseVerdict::Granted)
        << "volume " << v << ": both nodes were granted the lease";
    ASSERT_TRUE(ra.verdict == LeaseVerdict::Granted || rb.verdict == LeaseVerdict::Granted)
        << "volume " << v << ": " << ra.error << " / " << rb.error;
    (ra.verdict == LeaseVerdict::Granted ? a_won : b_won)++;
    const LeaseAnswer& loser = ra.verdict == LeaseVerdict::Granted ? rb : ra;
    EXPECT_EQ(loser.verdict, LeaseVerdict::HeldByOther) << loser.error;
    EXPECT_EQ(loser.lease.holder, ra.verdict == LeaseVerdict::Granted ? "node-a" : "node-b");
  }
  std::printf("race: node-a won %d, node-b won %d of 40\n", a_won, b_won);
}

TEST(EtcdThreeMembers, OneMemberLostStillWorksTwoLostIsUnreachable) {
  EtcdProcess etcd(3, kBasePort);
  ASSERT_TRUE(etcd.start());
  EtcdLeaseAuthority a(options_for(etcd.endpoints())), b(options_for(etcd.endpoints()));
  LeaseAnswer got = a.acquire(1, "node-a", 4000);
  ASSERT_EQ(got.verdict, LeaseVerdict::Granted) << got.error;
  // The first endpoint (the one both use first) dies: the others answer, the lease holds.
  etcd.kill_member(0);
  // A leader election may be running: renewals fail over to the next member within the timeout.
  LeaseAnswer renewed;
  for (int i = 0; i < 10; ++i) {
    renewed = a.acquire(1, "node-a", 4000);
    if (renewed.verdict == LeaseVerdict::Granted) break;
    ASSERT_EQ(renewed.verdict, LeaseVerdict::Unreachable);
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_EQ(renewed.verdict, LeaseVerdict::Granted) << renewed.error;
  EXPECT_EQ(renewed.lease.epoch, got.lease.epoch);
  EXPECT_EQ(b.acquire(1, "node-b", 4000).verdict, LeaseVerdict::HeldByOther);
  EXPECT_EQ(b.acquire(2, "node-b", 4000).verdict, LeaseVerdict::Granted);
  // A second member lost: no quorum, nothing is granted any more.
  etcd.kill_member(1);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(a.acquire(1, "node-a", 4000).verdict, LeaseVerdict::Unreachable);
  EXPECT_EQ(b.acquire(3, "node-b", 4000).verdict, LeaseVerdict::Unreachable);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2 * 2000ms);
}

}  // namespace
}  // namespace nasd::membership
