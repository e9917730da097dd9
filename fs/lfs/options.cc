#include "fs/lfs/options.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <stdexcept>

#include "fs/lfs/snapshot_schedule.h"
#include "util/config.h"

namespace nasd::fs::lfs {

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

uint64_t auto_cache_bytes(uint64_t volume_bytes, uint64_t memory_bytes, size_t volumes) {
  constexpr uint64_t kFloor = 512ull << 20;  // the fixed default this rule replaced
  const uint64_t share = memory_bytes / 2 / std::max<size_t>(volumes, 1);
  return std::max(kFloor, std::min(volume_bytes, share));
}

LfsOptions LfsOptions::from_config(const ConfigSection& section, const Config& config,
                                   const std::string& base_dir) {
  auto unknown = section.unknown_keys({"id", "backing", "size", "segment_size", "cache", "atime",
                                        "snapshot_schedule", "allocation", "test_fault_file"});
  if (!unknown.empty())
    throw ConfigError("[volume " + section.name() + "] unknown key '" + unknown.front() + "'");
  LfsOptions o;
  o.volume_id = section.get_u32("id", 0);
  std::string backing = section.get("backing", section.name() + ".lfs");
  if (backing.empty()) throw ConfigError("[volume " + section.name() + "] empty backing");
  o.backing = (backing[0] == '/' || base_dir.empty()) ? backing : base_dir + "/" + backing;
  o.size = section.get_size("size", o.size);
  o.segment_size = section.get_size("segment_size", o.segment_size);
  if (std::string cache = section.get("cache", "auto"); cache == "auto")
    o.cache_bytes =
        auto_cache_bytes(o.size, physical_memory_bytes(), config.sections("volume").size());
  else
    o.cache_bytes = section.get_size("cache", o.cache_bytes);
  std::string atime = section.get("atime", "off");
  if (atime != "on" && atime != "off")
    throw ConfigError("[volume " + section.name() + "] atime must be on or off");
  o.atime = atime == "on";
  std::string allocation = section.get("allocation", "thick");
  if (allocation != "thick" && allocation != "thin")
    throw ConfigError("[volume " + section.name() + "] allocation must be thick or thin");
  o.preallocate = allocation == "thick";
  // For tests only: while this file holds "eio" or "enospc", every write to the backing store
  // fails with that error, as if the host had returned it.
  if (std::string path = section.get("test_fault_file", ""); !path.empty()) {
    if (path[0] != '/' && !base_dir.empty()) path = base_dir + "/" + path;
    o.write_fault = [path] {
      std::ifstream in(path);
      std::string word;
      if (!(in >> word)) return 0;
      if (word == "eio") return EIO;
      if (word == "enospc") return ENOSPC;
      return 0;
    };
  }
  o.snapshot_schedule = section.get("snapshot_schedule", "");
  try {
    SnapshotSchedule::parse(o.snapshot_schedule);
  } catch (const std::invalid_argument& e) {
    throw ConfigError("[volume " + section.name() + "] snapshot_schedule: " + e.what());
  }
  return o;
}

}  // namespace nasd::fs::lfs
