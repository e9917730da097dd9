// [nvram] configuration parsing.
#include <gtest/gtest.h>

#include "nvram/journal_options.h"

namespace nasd::nvram {
namespace {

TEST(JournalOptions, ReadsTheShippedKeysAndResolvesTheFileInsideDataDir) {
  Config cfg = Config::parse(
      "[nvram]\nfile = nv.img\nsize = 64M\nmode = host\n");
  JournalOptions o = JournalOptions::from_config(cfg, "/srv/nasd");
  EXPECT_EQ(o.path, "/srv/nasd/nv.img");
  EXPECT_EQ(o.size, 64ull << 20);
  EXPECT_EQ(o.mode, DurabilityMode::Host);
  EXPECT_TRUE(o.mirror.empty());
}

TEST(JournalOptions, OptionalTuningAndMirrorKeys) {
  Config cfg = Config::parse(
      "[nvram]\nflush_threshold = 70\nflush_interval_ms = 250\n"
      "space_wait_ms = 1500\nmirror = 127.0.0.1:7070\nmirror_policy = fail\n"
      "mirror_timeout_ms = 300\n");
  JournalOptions o = JournalOptions::from_config(cfg, "/d");
  EXPECT_EQ(o.path, "/d/nvram.img");
  EXPECT_EQ(o.size, 2ull << 30);
  EXPECT_EQ(o.mode, DurabilityMode::Process);
  EXPECT_EQ(o.flush_threshold_pct, 70u);
  EXPECT_EQ(o.flush_interval.count(), 250);
  EXPECT_EQ(o.space_wait.count(), 1500);
  EXPECT_EQ(o.mirror, "127.0.0.1:7070");
  EXPECT_EQ(o.mirror_policy, MirrorPolicy::Fail);
  EXPECT_EQ(o.mirror_timeout.count(), 300);
}

TEST(JournalOptions, BadValuesAreClearErrors) {
  auto bad = [](const std::string& nvram) {
    try {
      JournalOptions::from_config(Config::parse("[nvram]\n" + nvram + "\n"), "/d");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(bad("mode = battery").find("mode"), std::string::npos);
  EXPECT_NE(bad("sise = 2G").find("sise"), std::string::npos);
  EXPECT_NE(bad("flush_threshold = 100").find("flush_threshold"), std::string::npos);
  EXPECT_NE(bad("mirror_policy = maybe").find("mirror_policy"), std::string::npos);
  EXPECT_NE(bad("size = 1k").find("size"), std::string::npos);
  EXPECT_NE(bad("space_wait_ms = -5").find("space_wait_ms"), std::string::npos);
}

}  // namespace
}  // namespace nasd::nvram
