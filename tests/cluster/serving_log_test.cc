// The serving log's lines are the contract with the fault drill's checker
// (bench/drill/serving_check.h): boot, start, stop with both bounds, one line each, on disk.
#include "cluster/serving_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "tests/cluster/scratch_dir.h"

namespace nasd::cluster {
namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(ServingLog, WritesBootStartAndStopLines) {
  testing::ScratchDir dir("nasd-serving-log");
  const std::string path = dir.path + "/serving.log";
  std::string error;
  {
    auto log = ServingLog::open(path, &error);
    ASSERT_TRUE(log) << error;
    log->started("v0", 3);
    log->stopped("v0", 3, 1796000000123, 1796000000100);
    log->started("v1", 0);
    log->stopped("v1", 0, 0, 0);
  }
  auto again = ServingLog::open(path, &error);  // a restart appends its own boot line
  ASSERT_TRUE(again);
  const auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_TRUE(std::regex_match(lines[0], std::regex("[0-9]{13} boot " + std::to_string(getpid()))));
  EXPECT_TRUE(std::regex_match(lines[1], std::regex("[0-9]{13} start v0 3")));
  EXPECT_TRUE(std::regex_match(lines[2], std::regex("[0-9]{13} stop v0 3 trusted_until=1796000000123 last_served=1796000000100")));
  EXPECT_TRUE(std::regex_match(lines[4], std::regex("[0-9]{13} stop v1 0 trusted_until=- last_served=-")));
  EXPECT_TRUE(std::regex_match(lines[5], std::regex("[0-9]{13} boot [0-9]+")));
  // Times never go backwards within a log written by one clock.
  EXPECT_LE(std::stoll(lines[1]), std::stoll(lines[2]));
}

TEST(ServingLog, RefusesAPathItCannotOpen) {
  std::string error;
  EXPECT_FALSE(ServingLog::open("/nonexistent-dir/serving.log", &error));
  EXPECT_NE(error.find("nonexistent"), std::string::npos);
}

}  // namespace
}  // namespace nasd::cluster
