// The status monitor's files: the state number moves to the next odd number on every start,
// and the client list outlives a restart (it is what SM_NOTIFY goes to).
#include "server/nlm/status_monitor.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

namespace nasd::nlm {
namespace {

class StatusMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("nasd-sm-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(StatusMonitorTest, StateIsOddAndAdvancesOnEveryStart) {
  int32_t first, second;
  {
    StatusMonitor m(dir_ / "sm", 16);
    first = m.state();
  }
  {
    StatusMonitor m(dir_ / "sm", 16);
    second = m.state();
    EXPECT_EQ(m.advance_state(), second + 2);
  }
  EXPECT_EQ(first % 2, 1);
  EXPECT_EQ(second, first + 2);
  StatusMonitor m(dir_ / "sm", 16);
  EXPECT_EQ(m.state(), second + 4);
}

TEST_F(StatusMonitorTest, ClientsOutliveARestart) {
  {
    StatusMonitor m(dir_ / "sm", 2);
    EXPECT_TRUE(m.monitor("client1", "10.0.0.1"));
    EXPECT_TRUE(m.monitor("client2", "10.0.0.2"));
    EXPECT_TRUE(m.monitor("client1", "10.0.0.3"));  // moved
    EXPECT_FALSE(m.monitor("client3", "10.0.0.4"));  // full
    EXPECT_FALSE(m.monitor("bad name", "10.0.0.5"));
    EXPECT_FALSE(m.monitor("", "10.0.0.5"));
  }
  StatusMonitor m(dir_ / "sm", 2);
  ASSERT_EQ(m.hosts().size(), 2u);
  EXPECT_EQ(m.address_of("client1"), "10.0.0.3");
  EXPECT_EQ(StatusMonitor::load_hosts((dir_ / "sm" / "clients").string()).size(), 2u);
  m.unmonitor("client1");
  EXPECT_EQ(m.address_of("client1"), "");
  m.unmonitor_all();
  EXPECT_TRUE(m.hosts().empty());
}

}  // namespace
}  // namespace nasd::nlm
