#include "cluster/interconnect/router.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/cluster/echo_volume.h"
#include "tests/cluster/loopback_channel.h"

namespace nasd::interconnect {
namespace {

using cluster::testing::EchoVolume;
using cluster::testing::LoopbackChannel;
using cluster::testing::MapResolver;

// Node "a" is under test; node "b" is reached through a loopback channel to its volumes.
class RouterTest : public ::testing::Test {
 protected:
  RouterTest() {
    b_volumes_.add(&b_copy_);
    channel_ = std::make_shared<LoopbackChannel>(&b_volumes_);
    router_ = std::make_unique<ClusterRouter>("a", [this](const std::string& node) {
      return node == "b" ? channel_ : nullptr;
    });
    local_ = std::make_shared<EchoVolume>(1);
    router_->add_local(local_);
  }

  fs::Status getattr(fs::Volume* v) {
    fs::Attr attr;
    return v->getattr(fs::OpContext{}, {2, 7}, &attr);
  }

  EchoVolume b_copy_{1};  // the same volume as opened by node b
  MapResolver b_volumes_;
  std::shared_ptr<LoopbackChannel> channel_;
  std::unique_ptr<ClusterRouter> router_;
  std::shared_ptr<EchoVolume> local_;
};

TEST_F(RouterTest, UnknownVolumeIsNull) {
  EXPECT_EQ(router_->find(99), nullptr);
  EXPECT_EQ(router_->served_here().find(99), nullptr);
  EXPECT_FALSE(router_->set_owner(99, "a"));
  EXPECT_FALSE(router_->owner(99).has_value());
}

TEST_F(RouterTest, VolumeWithoutOwnerAnswersJukebox) {
  fs::Volume* v = router_->find(1);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->id(), 1u);
  EXPECT_EQ(v->root(), local_->root());
  EXPECT_EQ(getattr(v), fs::Status::Jukebox);
  EXPECT_EQ(local_->calls(), 0u);
}

TEST_F(RouterTest, OwnedHereResolvesToTheLocalVolume) {
  ASSERT_TRUE(router_->set_owner(1, "a"));
  EXPECT_EQ(router_->find(1), local_.get());
  EXPECT_EQ(router_->served_here().find(1), local_.get());
  EXPECT_EQ(router_->owner(1), "a");
}

TEST_F(RouterTest, AFencedLocalVolumeAnswersJukeboxUntilTheFenceLifts) {
  std::atomic<bool> lease_trusted{true};
  ASSERT_TRUE(router_->set_owner(1, "a"));
  ASSERT_TRUE(router_->set_fence(1, [&] { return lease_trusted.load(); }));
  fs::Volume* found = router_->find(1);
  EXPECT_EQ(getattr(found), fs::Status::Ok);
  EXPECT_EQ(local_->calls(), 1u);
  lease_trusted = false;  // the lease ran out before the membership noticed
  EXPECT_EQ(getattr(found), fs::Status::Jukebox) << "a call that found the volume before";
  EXPECT_EQ(getattr(router_->find(1)), fs::Status::Jukebox);
  EXPECT_EQ(getattr(router_->served_here().find(1)), fs::Status::Jukebox);
  EXPECT_EQ(local_->calls(), 1u);
  EXPECT_FALSE(router_->serves_here(1)) << "NLM would still grant locks here";
  // Forwarding is not fenced: the partner decides for its own volumes.
  ASSERT_TRUE(router_->set_owner(1, "b"));
  EXPECT_EQ(getattr(router_->find(1)), fs::Status::Ok);
  EXPECT_FALSE(router_->serves_here(1));
  lease_trusted = true;
  EXPECT_FALSE(router_->serves_here(1));
  ASSERT_TRUE(router_->set_owner(1, "a"));
  EXPECT_EQ(getattr(router_->find(1)), fs::Status::Ok);
  EXPECT_TRUE(router_->serves_here(1));
  EXPECT_FALSE(router_->serves_here(99));
  EXPECT_FALSE(router_->set_fence(99, [] { return true; }));
}

TEST_F(RouterTest, OwnedElsewhereIsForwarded) {
  ASSERT_TRUE(router_->set_owner(1, "b"));
  fs::Volume* v = router_->find(1);
  ASSERT_NE(v, local_.get());
  EXPECT_EQ(getattr(v), fs::Status::Ok);
  EXPECT_EQ(b_copy_.calls(), 1u);
  EXPECT_EQ(local_->calls(), 0u);
  // A forwarded call arriving here must not be forwarded again.
  EXPECT_EQ(getattr(router_->served_here().find(1)), fs::Status::Jukebox);
}

TEST_F(RouterTest, FailoverAndFailbackSwitchTargets) {
  ASSERT_TRUE(router_->set_owner(1, "b"));
  fs::Volume* remote = router_->find(1);
  ASSERT_TRUE(router_->set_owner(1, ""));  // b fenced, takeover in progress
  EXPECT_EQ(getattr(router_->find(1)), fs::Status::Jukebox);
  ASSERT_TRUE(router_->set_owner(1, "a"));  // taken over
  EXPECT_EQ(router_->find(1), local_.get());
  ASSERT_TRUE(router_->set_owner(1, "b"));  // failback
  EXPECT_EQ(router_->find(1), remote);      // the same proxy object is reused
  // A request still holding the old pointer keeps working.
  EXPECT_EQ(getattr(remote), fs::Status::Ok);
}

TEST_F(RouterTest, UnknownPeerIsRejectedAndOwnerKept) {
  ASSERT_TRUE(router_->set_owner(1, "a"));
  EXPECT_FALSE(router_->set_owner(1, "zz"));
  EXPECT_EQ(router_->owner(1), "a");
  EXPECT_EQ(router_->find(1), local_.get());
}

TEST_F(RouterTest, TakeoverBeforeTheVolumeIsOpenWaits) {
  router_->add_remote(7, {2, 7});
  ASSERT_TRUE(router_->set_owner(7, "a"));  // owned here, not opened yet
  EXPECT_EQ(getattr(router_->find(7)), fs::Status::Jukebox);
  auto opened = std::make_shared<EchoVolume>(7);
  router_->add_local(opened);
  EXPECT_EQ(router_->find(7), opened.get());
}

TEST_F(RouterTest, ReopenedVolumeReplacesTheOldObjectWhichStaysUsable) {
  ASSERT_TRUE(router_->set_owner(1, "a"));
  fs::Volume* old = router_->find(1);
  auto reopened = std::make_shared<EchoVolume>(1);
  std::weak_ptr<EchoVolume> old_ref = local_;
  router_->add_local(reopened);
  local_.reset();  // the router alone keeps the old object alive now
  EXPECT_EQ(router_->find(1), reopened.get());
  EXPECT_FALSE(old_ref.expired());
  EXPECT_EQ(getattr(old), fs::Status::Ok);
}

TEST_F(RouterTest, UnreachableOwnerGivesJukebox) {
  ASSERT_TRUE(router_->set_owner(1, "b"));
  channel_->set_down(true);
  EXPECT_EQ(getattr(router_->find(1)), fs::Status::Jukebox);
}

TEST_F(RouterTest, ConcurrentLookupsDuringOwnershipChanges) {
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      while (!done) {
        fs::Volume* v = router_->find(1);
        fs::Status s = v ? getattr(v) : fs::Status::Stale;
        if (s != fs::Status::Ok && s != fs::Status::Jukebox) ++bad;
      }
    });
  }
  const char* owners[] = {"a", "b", "", "b", "a"};
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(router_->set_owner(1, owners[i % 5]));
  done = true;
  for (auto& r : readers) r.join();
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(router_->owner(1), "a");
}

}  // namespace
}  // namespace nasd::interconnect
