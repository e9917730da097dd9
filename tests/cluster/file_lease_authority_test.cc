#include "cluster/membership/file_lease_authority.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace nasd::membership {
namespace {

class FileLeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/nasd-lease-test-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Two nodes sharing the folder and a controllable clock, like two daemons on one machine.
  std::atomic<int64_t> clock_{1000000};
  std::string dir_;
  FileLeaseAuthority::Clock clock() {
    return [this] { return clock_.load(); };
  }
};

TEST_F(FileLeaseTest, FirstComerGetsTheLeaseTheOtherIsRefused) {
  FileLeaseAuthority a(dir_, clock()), b(dir_, clock());
  LeaseAnswer got = a.acquire(7, "node-a", 3000);
  ASSERT_EQ(got.verdict, LeaseVerdict::Granted) << got.error;
  EXPECT_EQ(got.lease.holder, "node-a");
  EXPECT_EQ(got.lease.epoch, 1u);
  EXPECT_EQ(got.lease.expires_ms, 1003000);

  LeaseAnswer refused = b.acquire(7, "node-b", 3000);
  EXPECT_EQ(refused.verdict, LeaseVerdict::HeldByOther);
  EXPECT_EQ(refused.lease.holder, "node-a");
}

TEST_F(FileLeaseTest, RenewalExtendsAndExpiryHandsOver) {
  FileLeaseAuthority a(dir_, clock()), b(dir_, clock());
  ASSERT_EQ(a.acquire(7, "node-a", 3000).verdict, LeaseVerdict::Granted);
  clock_ += 2000;
  LeaseAnswer renewed = a.acquire(7, "node-a", 3000);
  ASSERT_EQ(renewed.verdict, LeaseVerdict::Granted);
  EXPECT_EQ(renewed.lease.epoch, 1u);  // same holder: same epoch
  EXPECT_EQ(renewed.lease.expires_ms, 1005000);
  clock_ += 2999;
  EXPECT_EQ(b.acquire(7, "node-b", 3000).verdict, LeaseVerdict::HeldByOther);
  clock_ += 1;  // node-a stopped renewing: the lease lapses
  LeaseAnswer taken = b.acquire(7, "node-b", 3000);
  ASSERT_EQ(taken.verdict, LeaseVerdict::Granted);
  EXPECT_EQ(taken.lease.epoch, 2u);
  EXPECT_EQ(a.acquire(7, "node-a", 3000).verdict, LeaseVerdict::HeldByOther);
}

TEST_F(FileLeaseTest, ReleaseOnlyByTheHolder) {
  FileLeaseAuthority a(dir_, clock()), b(dir_, clock());
  ASSERT_EQ(a.acquire(3, "node-a", 3000).verdict, LeaseVerdict::Granted);
  EXPECT_FALSE(b.release(3, "node-b"));
  EXPECT_EQ(b.acquire(3, "node-b", 3000).verdict, LeaseVerdict::HeldByOther);
  EXPECT_TRUE(a.release(3, "node-a"));
  EXPECT_EQ(b.acquire(3, "node-b", 3000).verdict, LeaseVerdict::Granted);
  Lease lease;
  std::string error;
  ASSERT_TRUE(a.inspect(3, &lease, &error)) << error;
  EXPECT_EQ(lease.holder, "node-b");
  EXPECT_EQ(lease.epoch, 2u);
}

TEST_F(FileLeaseTest, VolumesAreIndependent) {
  FileLeaseAuthority a(dir_, clock()), b(dir_, clock());
  EXPECT_EQ(a.acquire(1, "node-a", 3000).verdict, LeaseVerdict::Granted);
  EXPECT_EQ(b.acquire(2, "node-b", 3000).verdict, LeaseVerdict::Granted);
}

TEST_F(FileLeaseTest, CorruptRecordIsReportedNotTrusted) {
  FileLeaseAuthority a(dir_, clock());
  { std::ofstream(a.path_of(4)) << "garbage that is not a lease\n"; }
  LeaseAnswer answer = a.acquire(4, "node-a", 3000);
  EXPECT_EQ(answer.verdict, LeaseVerdict::Unreachable);
  EXPECT_NE(answer.error.find("corrupt"), std::string::npos) << answer.error;
}

TEST_F(FileLeaseTest, MissingFolderIsUnreachable) {
  FileLeaseAuthority a(dir_ + "/no-such-dir", clock());
  LeaseAnswer answer = a.acquire(1, "node-a", 3000);
  EXPECT_EQ(answer.verdict, LeaseVerdict::Unreachable);
  EXPECT_FALSE(answer.error.empty());
}

TEST_F(FileLeaseTest, NodeNameWithSpacesIsRejected) {
  FileLeaseAuthority a(dir_, clock());
  EXPECT_EQ(a.acquire(1, "node a", 3000).verdict, LeaseVerdict::Unreachable);
}

TEST_F(FileLeaseTest, ConcurrentAcquirersGetExactlyOneGrant) {
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      FileLeaseAuthority auth(dir_, clock());  // each its own descriptor, like separate nodes
      if (auth.acquire(9, "node-" + std::to_string(t), 60000).verdict == LeaseVerdict::Granted) {
        ++granted;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(granted, 1);
}

TEST(LeaseRecord, FormatParseRoundTrip) {
  Lease l{"node-x", 12, 1700000000123};
  Lease got;
  ASSERT_TRUE(parse_lease(format_lease(l), &got));
  EXPECT_EQ(got.holder, "node-x");
  EXPECT_EQ(got.epoch, 12u);
  EXPECT_EQ(got.expires_ms, 1700000000123);
  Lease free_lease{"", 3, 0};
  ASSERT_TRUE(parse_lease(format_lease(free_lease), &got));
  EXPECT_EQ(got.holder, "");
  EXPECT_FALSE(parse_lease("nasd-lease 2 1 1 x\n", &got));
  EXPECT_FALSE(parse_lease("nasd-lease 1 1 1 x y\n", &got));
}

}  // namespace
}  // namespace nasd::membership
