#include "cluster/scaleout/ifs_options.h"

namespace nasd::scaleout {

IfsOptions IfsOptions::from_config(const ConfigSection& section) {
  const std::string where = "[volume " + section.name() + "] ";
  std::vector<std::string> unknown = section.unknown_keys({"id", "type", "protection", "drives", "orphan_sweep_interval_ms", "compaction_check_ms",
       "compaction_min_garbage", "compaction_min_garbage_percent", "compaction_rate"});
  if (!unknown.empty()) throw ConfigError(where + "unknown key '" + unknown.front() + "' for a scale-out volume");
  IfsOptions o;
  o.name = section.name();
  if (!section.has("id")) throw ConfigError(where + "needs an id");
  o.volume_id = section.get_u32("id", 0);
  std::string error;
  if (!parse_protection_policy(section.get("protection", "+2d:1n"), &o.policy, &error))
    throw ConfigError(where + "protection: " + error);
  o.drives = section.get_u32("drives", 4);
  if (o.drives < 1 || o.drives > 16) throw ConfigError(where + "drives: 1 to 16");
  // A day at most: longer is a typo, and 0 (off) is spelled as 0.
  constexpr int64_t kDayMs = 24ll * 3600 * 1000;
  const int64_t sweep = section.get_int("orphan_sweep_interval_ms", o.orphan_sweep_interval.count());
  if (sweep < 0 || sweep > kDayMs)
    throw ConfigError(where + "orphan_sweep_interval_ms: 0 (off) to 86400000");
  if (sweep > 0 && sweep < 1000)
    throw ConfigError(where + "orphan_sweep_interval_ms: at least 1000 (a sweep lists every drive)");
  o.orphan_sweep_interval = std::chrono::milliseconds(sweep);
  const int64_t check = section.get_int("compaction_check_ms", o.compaction.check_every.count());
  if (check < 0 || check > kDayMs) throw ConfigError(where + "compaction_check_ms: 0 (off) to 86400000");
  o.compaction.check_every = std::chrono::milliseconds(check);
  o.compaction.min_garbage_bytes = section.get_size("compaction_min_garbage", o.compaction.min_garbage_bytes);
  const int64_t percent = section.get_int("compaction_min_garbage_percent", 50);
  if (percent < 1 || percent > 100) throw ConfigError(where + "compaction_min_garbage_percent: 1 to 100");
  o.compaction.min_garbage_ratio = double(percent) / 100.0;
  o.compaction.max_bytes_per_sec = section.get_size("compaction_rate", o.compaction.max_bytes_per_sec);
  return o;
}

}  // namespace nasd::scaleout
