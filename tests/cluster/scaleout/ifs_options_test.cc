// [volume NAME] type = scaleout: the keys of the scale-out volume (ifs_options.h), their
// defaults, their bounds, and unknown keys refused.
#include <gtest/gtest.h>

#include "cluster/scaleout/ifs_options.h"

namespace nasd::scaleout {
namespace {

ConfigSection section(std::initializer_list<std::pair<const char*, const char*>> keys) {
  ConfigSection s("volume", "ifs", 1);
  s.set("type", "scaleout");
  s.set("id", "100");
  for (const auto& [k, v] : keys) s.set(k, v);
  return s;
}

TEST(IfsOptions, SweepAndCompactionDefaults) {
  const IfsOptions o = IfsOptions::from_config(section({}));
  EXPECT_EQ(o.orphan_sweep_interval.count(), 600000);
  EXPECT_EQ(o.compaction.check_every.count(), 30000);
  EXPECT_EQ(o.compaction.min_garbage_bytes, 64ull << 20);
  EXPECT_DOUBLE_EQ(o.compaction.min_garbage_ratio, 0.5);
  EXPECT_EQ(o.compaction.max_bytes_per_sec, 32ull << 20);
}

TEST(IfsOptions, SweepAndCompactionAreConfigurable) {
  const IfsOptions o = IfsOptions::from_config(section({{"orphan_sweep_interval_ms", "5000"},
                                                        {"compaction_check_ms", "0"},
                                                        {"compaction_min_garbage", "8M"},
                                                        {"compaction_min_garbage_percent", "25"},
                                                        {"compaction_rate", "0"}}));
  EXPECT_EQ(o.orphan_sweep_interval.count(), 5000);
  EXPECT_EQ(o.compaction.check_every.count(), 0);
  EXPECT_EQ(o.compaction.min_garbage_bytes, 8ull << 20);
  EXPECT_DOUBLE_EQ(o.compaction.min_garbage_ratio, 0.25);
  EXPECT_EQ(o.compaction.max_bytes_per_sec, 0u);
  EXPECT_EQ(IfsOptions::from_config(section({{"orphan_sweep_interval_ms", "0"}})).orphan_sweep_interval.count(), 0);
}

TEST(IfsOptions, OutOfRangeAndUnknownKeysAreRefused) {
  for (auto [k, v] : {std::pair{"orphan_sweep_interval_ms", "-1"}, {"orphan_sweep_interval_ms", "10"},
                      {"orphan_sweep_interval_ms", "999999999999"}, {"compaction_check_ms", "-5"},
                      {"compaction_min_garbage_percent", "0"}, {"compaction_min_garbage_percent", "101"},
                      {"compaction_min_garbage", "lots"}, {"orphan_sweep_interval", "5"},
                      {"protection", "+5n"}}) {
    EXPECT_THROW(IfsOptions::from_config(section({{k, v}})), ConfigError) << k << " = " << v;
  }
}

}  // namespace
}  // namespace nasd::scaleout
