#include "bench/target.h"

#include <gtest/gtest.h>

namespace nasd::bench {
namespace {

TEST(TargetTest, UrlWithPortsAndCredentials) {
  Target t = parse_target("nfs://127.0.0.1/r/v0?nfsport=2049&mountport=20048&uid=1000&gid=100");
  EXPECT_EQ(t.server, "127.0.0.1");
  EXPECT_EQ(t.export_path, "/r/v0");
  EXPECT_EQ(t.nfs_port, 2049);
  EXPECT_EQ(t.mount_port, 20048);
  EXPECT_EQ(t.uid, 1000);
  EXPECT_EQ(t.gid, 100);
}

TEST(TargetTest, PortInTheAuthorityAndNoQuery) {
  Target t = parse_target("nfs://server.example:3049/export");
  EXPECT_EQ(t.server, "server.example");
  EXPECT_EQ(t.nfs_port, 3049);
  EXPECT_EQ(t.mount_port, 0);
  EXPECT_EQ(t.uid, -1);
}

TEST(TargetTest, ClassicServerColonPath) {
  Target t = parse_target("filer:/r/v1");
  EXPECT_EQ(t.server, "filer");
  EXPECT_EQ(t.export_path, "/r/v1");
  EXPECT_EQ(t.nfs_port, 0);
}

TEST(TargetTest, RejectsMalformedTargets) {
  for (const char* bad : {"nfs://host", "nfs:///export", "nfs://h/e?nfsport=0", "nfs://h/e?nfsport=70000",
                          "nfs://h/e?mountport=abc", "nfs://h/e?bogus=1", "nfs://h/e?version=4",
                          "nfs://h/e?nfsport", "justahost", "host:relative/path", ":/export"}) {
    EXPECT_THROW(parse_target(bad), TargetError) << bad;
  }
}

}  // namespace
}  // namespace nasd::bench
