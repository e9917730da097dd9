// NASD_E2E_TARGET's parser: what the suite accepts as a server to point at, and what it refuses
// (a malformed target must fail the run, never fall back to a server of the suite's own).
#include <gtest/gtest.h>

#include <stdexcept>

#include "tests/e2e/e2e_target.h"

namespace nasd::e2e {
namespace {

TEST(E2eTargetTest, ParsesHostPortsAndExport) {
  E2eTarget t = E2eTarget::parse("127.0.1.3:2149:20148:/r/ifs");
  EXPECT_EQ(t.host, "127.0.1.3");
  EXPECT_EQ(t.nfs_port, 2149);
  EXPECT_EQ(t.mount_port, 20148);
  EXPECT_EQ(t.export_path, "/r/ifs");
  EXPECT_EQ(t.describe(), "127.0.1.3:2149:20148:/r/ifs");
  EXPECT_EQ(E2eTarget::parse(t.describe()).describe(), t.describe());
  EXPECT_EQ(t.url("/d/f"), "nfs://127.0.1.3/r/ifs/d/f?nfsport=2149&mountport=20148&version=3");
  EXPECT_EQ(t.url("", "x=1"), "nfs://127.0.1.3/r/ifs?nfsport=2149&mountport=20148&version=3&x=1");
}

TEST(E2eTargetTest, PortsDefaultToTheStandardOnes) {
  E2eTarget t = E2eTarget::parse("10.0.0.7:/r/v0/");
  EXPECT_EQ(t.nfs_port, 2049);
  EXPECT_EQ(t.mount_port, 20048);
  EXPECT_EQ(t.export_path, "/r/v0") << "a trailing slash names the same export";
  EXPECT_EQ(E2eTarget::parse("10.0.0.7:3049:/x").mount_port, 20048);
  EXPECT_EQ(E2eTarget::parse("10.0.0.7:/").url(""),
            "nfs://10.0.0.7/?nfsport=2049&mountport=20048&version=3");
}

TEST(E2eTargetTest, RefusesWhatIsMalformed) {
  for (const char* bad : {"127.0.0.1", "127.0.0.1:2049", "/r/v0", "host.example:/r/v0",
                          "127.0.0.1:0:/r", "127.0.0.1:65536:/r", "127.0.0.1:20x9:/r",
                          "127.0.0.1:2049:20048:1:/r", "127.0.0.1::/r", "127.0.0.1:2049::/r",
                          "::1:/r"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(E2eTarget::parse(bad), std::invalid_argument);
  }
  EXPECT_THROW(E2eTarget::parse("127.0.0.1:/" + std::string(1100, 'a')), std::invalid_argument);
  EXPECT_THROW(E2eTarget::parse("127.0.0.1:/r\nx"), std::invalid_argument);
  EXPECT_THROW(E2eTarget::parse(std::string(3000, '1') + ":/r"), std::invalid_argument);
}

}  // namespace
}  // namespace nasd::e2e
