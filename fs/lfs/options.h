// How one LFS volume is configured: the [volume NAME] section of nasd.conf.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "fs/lfs/write_gate.h"

namespace nasd {
class Config;
class ConfigSection;
}  // namespace nasd

namespace nasd::fs::lfs {

struct LfsOptions {
  std::string backing;                     // file or block device
  uint64_t size = 8ull << 30;              // bytes, used when creating a file
  uint64_t segment_size = 4ull << 20;
  uint64_t cache_bytes = 512ull << 20;     // block + inode cache budget
  bool atime = false;                      // update atime on READ
  uint32_t volume_id = 0;
  int flush_interval_ms = 1000;            // write-behind of unstable data / journalled ops
  int checkpoint_interval_ms = 30000;
  bool background_threads = true;          // write-behind + cleaner threads
  bool read_only = false;                  // fsck: recover in memory, never write
  // `snapshot_schedule` (see snapshot_schedule.h), checked when the config is read; empty = none.
  std::string snapshot_schedule;
  // Admits every write to the backing store (not from the config); a refused write fails, and
  // the volume with it. A shared volume is written only while its node owns it.
  std::shared_ptr<WriteGate> write_gate;

  // Reads `id`, `backing`, `size`, `segment_size`, `cache`, `atime` and `snapshot_schedule`. A relative `backing`
  // is taken inside `base_dir` (the node's data_dir). Throws nasd::ConfigError on bad values or
  // unknown keys.
  static LfsOptions from_config(const ConfigSection& section, const Config& config,
                                const std::string& base_dir);
};

}  // namespace nasd::fs::lfs
