// The node's plan: the configuration parsed once into role, journal and volumes with their ids.
#include "cluster/node_plan.h"

#include <gtest/gtest.h>
namespace nasd::cluster {
namespace {

NodePlan plan(const std::string& text) {
  return NodePlan::from_config(Config::parse(text, "/nonexistent-nasd-plan/n.conf"));
}

const char* kPeers = R"(
[node]
name = a
[cluster]
name = lab
interconnect = 127.0.0.1:7001
[peer b]
interconnect = 127.0.0.1:7002
volumes = v1
[volume v0]
id = 3
[volume v1]
id = 4
)";

TEST(NodePlan, AloneEveryVolumeIsLocalWithItsId) {
  NodePlan p = plan("[node]\n[volume v0]\nid = 2\n[volume v1]\n");
  EXPECT_EQ(p.role, NodeRole::Alone);
  ASSERT_EQ(p.volumes.size(), 2u);
  EXPECT_EQ(p.volumes[0].name, "v0");
  EXPECT_EQ(p.volumes[0].id, 2u);
  EXPECT_EQ(p.volumes[1].id, 0u) << "a [volume] without id is volume 0, as everywhere";
  EXPECT_TRUE(p.volumes[0].owner.empty());
  EXPECT_TRUE(p.journal.enabled);
  EXPECT_EQ(p.next_free_id(), 3u);
}

TEST(NodePlan, AStaticClusterKnowsWhichPeerOwnsWhat) {
  NodePlan p = plan(kPeers);
  EXPECT_EQ(p.role, NodeRole::StaticCluster);
  ASSERT_TRUE(p.volume("v1"));
  EXPECT_EQ(p.volume("v1")->owner, "b");
  EXPECT_EQ(p.volume("v0")->owner, "");
  EXPECT_TRUE(p.journal.mirror.empty());
}

TEST(NodePlan, AnHaPairMirrorsItsJournalToThePartnerUnlessToldOtherwise) {
  NodePlan p = plan(R"(
[node]
name = a
[cluster]
name = lab
interconnect = 127.0.0.1:7001
shared_dir = /srv/san
mirror_listen = 127.0.0.1:7101
[peer b]
interconnect = 127.0.0.1:7002
volumes = v1
mirror = 127.0.0.1:7102
listen = 127.0.0.2
nfs_port = 2149
mount_port = 20148
[volume v0]
id = 0
[volume v1]
id = 1
)");
  EXPECT_EQ(p.role, NodeRole::FailoverCluster);  // a ring of two
  EXPECT_EQ(p.journal.mirror, "127.0.0.1:7102");
  EXPECT_EQ(p.volume("v1")->owner, "b") << "the partner's home volume";
}

TEST(NodePlan, JournalOffIsParsedByTheJournalsOptions) {
  NodePlan p = plan("[node]\n[nvram]\nmode = off\n[volume v0]\n");
  EXPECT_FALSE(p.journal.enabled);
  EXPECT_THROW(plan("[node]\n[nvram]\nmode = of\n[volume v0]\n"), ConfigError);
}

TEST(NodePlan, BadConfigsAreRefusedBeforeAnythingStarts) {
  EXPECT_THROW(plan("[node]\n"), ConfigError) << "no volume";
  EXPECT_THROW(plan("[node]\n[volume v0]\nid = 1\n[volume v1]\nid = 1\n"), ConfigError) << "one id twice";
  EXPECT_THROW(plan("[node]\n[volume v0]\nid = -1\n"), ConfigError);
  EXPECT_THROW(plan("[node]\n[volume v0]\nid = 4294967296\n"), ConfigError);
  EXPECT_THROW(plan("[node]\nlisten_on = x\n[volume v0]\n"), ConfigError) << "unknown [node] key";
  EXPECT_THROW(plan("[node]\n[nvram]\nsise = 1G\n[volume v0]\n"), ConfigError) << "unknown [nvram] key";
}

TEST(NodePlan, AdminVolumesAreAddedWithTheSameRules) {
  NodePlan p = plan("[node]\n[volume v0]\nid = 0\n");
  p.add_volumes(Config::parse("[volume v9]\nid = 9\n"));
  ASSERT_TRUE(p.volume("v9"));
  EXPECT_EQ(p.volume("v9")->id, 9u);
  EXPECT_TRUE(p.config.section("volume", "v9"));
  EXPECT_THROW(p.add_volumes(Config::parse("[volume v10]\nid = 9\n")), ConfigError);
  EXPECT_THROW(p.add_volumes(Config::parse("[volume v9]\nid = 10\n")), ConfigError);
}

}  // namespace
}  // namespace nasd::cluster
