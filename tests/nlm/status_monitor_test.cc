// The status monitor's files: the state number moves to the next odd number on every start,
// and the client list outlives a restart (it is what SM_NOTIFY goes to).
#include "server/nlm/status_monitor.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

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
    StatusMonitor m(dir_ / "sm", 3);
    EXPECT_TRUE(m.monitor("client1", "10.0.0.1"));
    EXPECT_TRUE(m.monitor("client2", "10.0.0.2"));
    // The name at another address is another client: the first entry is never rebound.
    EXPECT_TRUE(m.monitor("client1", "10.0.0.3"));
    EXPECT_TRUE(m.monitor("client1", "10.0.0.3"));  // known: nothing written
    EXPECT_FALSE(m.monitor("client3", "10.0.0.4"));  // full
    EXPECT_FALSE(m.monitor("bad name", "10.0.0.5"));
    EXPECT_FALSE(m.monitor("", "10.0.0.5"));
    EXPECT_FALSE(m.monitor("-", "10.0.0.5"));  // the log's removal mark
  }
  StatusMonitor m(dir_ / "sm", 3);
  ASSERT_EQ(m.hosts().size(), 3u);
  EXPECT_TRUE(m.monitored("client1", "10.0.0.1"));
  EXPECT_TRUE(m.monitored("client1", "10.0.0.3"));
  EXPECT_EQ(StatusMonitor::load_hosts((dir_ / "sm" / "clients").string()).size(), 3u);
  m.forget({{"client1", "10.0.0.1"}});
  EXPECT_FALSE(m.monitored("client1", "10.0.0.1"));
  EXPECT_TRUE(m.monitored("client1", "10.0.0.3"));
  m.unmonitor("client1");
  EXPECT_FALSE(m.monitored("client1", "10.0.0.3"));
  m.unmonitor_all();
  EXPECT_TRUE(m.hosts().empty());
}

TEST_F(StatusMonitorTest, OneAddressGetsABoundedNumberOfNames) {
  StatusMonitor m(dir_ / "sm", 100, 2);
  EXPECT_TRUE(m.monitor("a1", "10.0.0.1"));
  EXPECT_TRUE(m.monitor("a2", "10.0.0.1"));
  EXPECT_TRUE(m.full_for("10.0.0.1"));
  EXPECT_FALSE(m.monitor("a3", "10.0.0.1"));
  EXPECT_FALSE(m.full_for("10.0.0.2"));
  EXPECT_TRUE(m.monitor("b1", "10.0.0.2"));  // another address is not held up
}

// The file is a log: a new client appends one line, whatever the list's length, and the log is
// compacted when it has grown to twice the list (here by forgetting and adding again).
TEST_F(StatusMonitorTest, ANewClientAppendsOneLine) {
  auto lines = [&] {
    std::ifstream in(dir_ / "sm" / "clients");
    size_t n = 0;
    for (std::string l; std::getline(in, l);) n++;
    return n;
  };
  StatusMonitor m(dir_ / "sm", 1000, 1000);
  for (int i = 0; i < 100; i++) ASSERT_TRUE(m.monitor("c" + std::to_string(i), "10.0.0.1"));
  EXPECT_EQ(lines(), 100u);
  for (int i = 0; i < 300; i++) {
    m.forget({{"c0", "10.0.0.1"}});
    ASSERT_TRUE(m.monitor("c0", "10.0.0.1"));
  }
  EXPECT_LE(lines(), 2 * 100u + 17);
  EXPECT_EQ(StatusMonitor::load_hosts((dir_ / "sm" / "clients").string()).size(), 100u);
}

TEST(StatusMonitorLog, RemovalLinesAndMalformedLines) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("nasd-sm-log-" + std::to_string(::getpid()))).string();
  {
    std::ofstream out(path);
    out << "10.0.0.1 a\n10.0.0.2 b called\n- 10.0.0.1 a\n10.0.0.3\n10.0.0.4 c d e\n"
        << "10.0.0.2 b called\n10.0.0.5 e\n";
  }
  auto hosts = StatusMonitor::load_hosts(path);
  std::filesystem::remove(path);
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0], (MonitoredHost{"b", "10.0.0.2", "called"}));
  EXPECT_EQ(hosts[1], (MonitoredHost{"e", "10.0.0.5", ""}));
}

}  // namespace
}  // namespace nasd::nlm
