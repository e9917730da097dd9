#include "fs/lfs/options.h"

#include <stdexcept>

#include "fs/lfs/snapshot_schedule.h"
#include "util/config.h"

namespace nasd::fs::lfs {

LfsOptions LfsOptions::from_config(const ConfigSection& section, const Config& config,
                                   const std::string& base_dir) {
  (void)config;
  auto unknown = section.unknown_keys({"id", "backing", "size", "segment_size", "cache", "atime",
                                        "snapshot_schedule"});
  if (!unknown.empty())
    throw ConfigError("[volume " + section.name() + "] unknown key '" + unknown.front() + "'");
  LfsOptions o;
  o.volume_id = section.get_u32("id", 0);
  std::string backing = section.get("backing", section.name() + ".lfs");
  if (backing.empty()) throw ConfigError("[volume " + section.name() + "] empty backing");
  o.backing = (backing[0] == '/' || base_dir.empty()) ? backing : base_dir + "/" + backing;
  o.size = section.get_size("size", o.size);
  o.segment_size = section.get_size("segment_size", o.segment_size);
  o.cache_bytes = section.get_size("cache", o.cache_bytes);
  std::string atime = section.get("atime", "off");
  if (atime != "on" && atime != "off")
    throw ConfigError("[volume " + section.name() + "] atime must be on or off");
  o.atime = atime == "on";
  o.snapshot_schedule = section.get("snapshot_schedule", "");
  try {
    SnapshotSchedule::parse(o.snapshot_schedule);
  } catch (const std::invalid_argument& e) {
    throw ConfigError("[volume " + section.name() + "] snapshot_schedule: " + e.what());
  }
  return o;
}

}  // namespace nasd::fs::lfs
