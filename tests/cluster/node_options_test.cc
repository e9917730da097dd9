#include "cluster/node_options.h"

#include <gtest/gtest.h>

namespace nasd::cluster {
namespace {

// The node is the one place that resolves [node] paths; the journal, the volumes and the NFS
// programs are handed what it resolved.
TEST(NodeOptionsTest, DataDirIsRelativeToTheConfigAndKeysLiveInside) {
  NodeOptions o = NodeOptions::from_config(
      Config::parse("[node]\nname = a\ndata_dir = ../data/\nhandle_key = hk\n", "/etc/nasd/nasd.conf"));
  EXPECT_EQ(o.name, "a");
  EXPECT_EQ(o.data_dir, "/etc/data");
  EXPECT_EQ(o.handle_key, "/etc/data/hk");
  EXPECT_EQ(o.admin_socket, "/etc/data/nasd.sock");
  EXPECT_EQ(o.in_data_dir("/abs/key"), "/abs/key");
}

TEST(NodeOptionsTest, DefaultsAndErrors) {
  NodeOptions o = NodeOptions::from_config(Config::parse("[node]\n", "/srv/n.conf"));
  EXPECT_EQ(o.data_dir, "/srv/data");
  EXPECT_EQ(o.handle_key, "/srv/data/handle.key");
  EXPECT_THROW(NodeOptions::from_config(Config::parse("[volume v]\nid = 0\n")), ConfigError);
  EXPECT_THROW(NodeOptions::from_config(Config::parse("[node]\ndatadir = x\n")), ConfigError);
}

TEST(NodeOptionsTest, LogLevelIsInfoUnlessSetAndMustBeKnown) {
  EXPECT_EQ(NodeOptions::from_config(Config::parse("[node]\n")).log_level, util::LogLevel::Info);
  EXPECT_EQ(NodeOptions::from_config(Config::parse("[node]\nlog_level = debug\n")).log_level,
            util::LogLevel::Debug);
  EXPECT_THROW(NodeOptions::from_config(Config::parse("[node]\nlog_level = chatty\n")), ConfigError);
}

}  // namespace
}  // namespace nasd::cluster
