// The storage-side fence of a shared volume, between two "nodes" in one process (OFD locks
// belong to the open file, so two fences exclude each other as two processes would).
#include "cluster/volume_fence.h"
#include "tests/cluster/scratch_dir.h"
#include "util/log.h"

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace nasd::cluster {
namespace {

using std::chrono::milliseconds;


std::shared_ptr<VolumeFence> take(const std::string& path, const std::string& node,
                                  std::vector<std::string>* log, milliseconds wait = milliseconds(500),
                                  std::function<bool()> lease = {}) {
  std::string error;
  auto f = VolumeFence::take(path, node, std::move(lease), wait, &error);
  EXPECT_TRUE(f || !error.empty());
  if (!f) log->push_back("take failed: " + error);
  return f;
}

// Node a owns the volume and is admitted to write.
class VolumeFenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a = take(path, "a", &log);
    ASSERT_TRUE(a);
    ASSERT_TRUE(a->enter());
  }
  testing::ScratchDir dir{"nasd-fence"};
  const std::string path = dir.path + "/v0.fence";
  std::vector<std::string> log;
  std::shared_ptr<VolumeFence> a;
};

TEST_F(VolumeFenceTest, TheNextOwnerFencesThePreviousOne) {
  util::LogCapture fenced("cluster");
  a->leave();
  auto b = take(path, "b", &log);
  ASSERT_TRUE(b);
  EXPECT_GT(b->token(), a->token());
  EXPECT_FALSE(a->enter()) << "the previous owner still writes";
  EXPECT_FALSE(a->enter());
  ASSERT_EQ(fenced.lines().size(), 1u) << "the fencing is reported once";
  EXPECT_TRUE(fenced.has("taken by b")) << fenced.lines()[0];
  ASSERT_TRUE(b->enter());
  b->leave();
  // Failback: a takes it again with a new fence; b's is spent.
  auto a2 = take(path, "a", &log);
  ASSERT_TRUE(a2);
  EXPECT_TRUE(a2->enter());
  a2->leave();
  EXPECT_FALSE(b->enter());
}

TEST_F(VolumeFenceTest, AWriteAlreadyAdmittedHoldsTheTakeoverBack) {
  // a is paused inside this write.
  EXPECT_FALSE(take(path, "b", &log, milliseconds(100)));
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log.back().find("still running"), std::string::npos) << log.back();

  // Given time, the takeover waits for the write and then wins.
  std::atomic<bool> taken{false};
  std::shared_ptr<VolumeFence> b;
  std::thread taker([&] {
    b = take(path, "b", &log, milliseconds(5000));
    taken = true;
  });
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_FALSE(taken) << "b took the volume in the middle of a's write";
  a->leave();
  taker.join();
  ASSERT_TRUE(b);
  EXPECT_FALSE(a->enter());
  EXPECT_TRUE(b->enter());
  b->leave();
}

TEST(VolumeFence, NoWriteWithoutTheLease) {
  testing::ScratchDir dir{"nasd-fence"};
  std::vector<std::string> log;
  std::atomic<bool> lease{true};
  auto a = take(dir.path + "/v0.fence", "a", &log, milliseconds(500), [&] { return lease.load(); });
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->enter());
  a->leave();
  lease = false;
  EXPECT_FALSE(a->enter());
}

// With the etcd authority the token is the lease epoch: a node whose lease was superseded
// cannot take the fence after the newer owner, and is fenced if it took it before.
TEST(VolumeFence, LeaseEpochsOnlyMoveForward) {
  testing::ScratchDir dir{"nasd-fence"};
  const std::string path = VolumeFence::fence_path(dir.path, "v0", true);
  EXPECT_EQ(path, dir.path + "/v0.epoch-fence");
  EXPECT_EQ(VolumeFence::fence_path(dir.path, "v0", false), dir.path + "/v0.fence");
  std::string error;
  auto old_owner = VolumeFence::take(path, "a", {}, milliseconds(100), &error, 17);
  ASSERT_TRUE(old_owner) << error;
  EXPECT_EQ(old_owner->token(), 17u);
  ASSERT_TRUE(old_owner->enter());
  old_owner->leave();
  auto new_owner = VolumeFence::take(path, "b", {}, milliseconds(100), &error, 42);
  ASSERT_TRUE(new_owner) << error;
  EXPECT_EQ(new_owner->token(), 42u);
  EXPECT_FALSE(old_owner->enter());  // the older epoch writes nothing more
  EXPECT_TRUE(new_owner->enter());
  new_owner->leave();
  // The old owner, paused before it took the fence, wakes and tries: refused.
  auto stale = VolumeFence::take(path, "a", {}, milliseconds(100), &error, 17);
  EXPECT_FALSE(stale);
  EXPECT_NE(error.find("later than ours"), std::string::npos) << error;
  EXPECT_TRUE(new_owner->enter());
  new_owner->leave();
  // The same epoch again (an open retried under the same lease) is the same owner.
  auto again = VolumeFence::take(path, "b", {}, milliseconds(100), &error, 42);
  ASSERT_TRUE(again) << error;
  EXPECT_TRUE(again->enter());
  again->leave();
}

TEST(VolumeFence, AnUnusableFolderIsAClearError) {
  std::string error;
  auto f = VolumeFence::take("/nonexistent-nasd-dir/v0.fence", "a", {}, milliseconds(10), &error);
  EXPECT_FALSE(f);
  EXPECT_NE(error.find("/nonexistent-nasd-dir/v0.fence"), std::string::npos) << error;
}

}  // namespace
}  // namespace nasd::cluster
