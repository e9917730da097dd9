// Every room logs through util/log.h: levels parse, the process level filters, captures see
// only their room.
#include "util/log.h"

#include <gtest/gtest.h>

namespace nasd::util {

TEST(Log, LevelsParseAndUnknownOnesAreRefused) {
  EXPECT_EQ(parse_log_level("debug"), LogLevel::Debug);
  EXPECT_EQ(parse_log_level("info"), LogLevel::Info);
  EXPECT_EQ(parse_log_level("warn"), LogLevel::Warn);
  EXPECT_EQ(parse_log_level("error"), LogLevel::Error);
  EXPECT_EQ(parse_log_level("off"), LogLevel::Off);
  EXPECT_FALSE(parse_log_level("loud"));
  EXPECT_FALSE(parse_log_level(""));
}

TEST(Log, TheProcessLevelFiltersEveryRoomAndACaptureSeesOnlyItsRoom) {
  LogCapture nvram("test-nvram");
  LogCapture cluster("test-cluster");
  set_log_level(LogLevel::Warn);
  log("test-nvram").info("not shown");
  log("test-nvram").warn("mirror lost");
  log("test-cluster").error("volume v0 could not be opened");
  EXPECT_FALSE(log("test-nvram").enabled(LogLevel::Info));
  set_log_level(LogLevel::Info);
  log("test-nvram").info("mirror back");
  EXPECT_EQ(nvram.lines(), (std::vector<std::string>{"mirror lost", "mirror back"}));
  EXPECT_EQ(cluster.lines(), (std::vector<std::string>{"volume v0 could not be opened"}));
  EXPECT_EQ(&log("test-nvram"), &log("test-nvram")) << "one logger per room";
}

}  // namespace nasd::util
