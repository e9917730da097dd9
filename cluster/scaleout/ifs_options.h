// [volume NAME] with `type = scaleout`: the scale-out volume striped over every node.
//   [volume ifs]
//   id = 100
//   type = scaleout
//   protection = +2d:1n      # OneFS notation (protection_policy.h); the default
//   drives = 4               # drives (backing files) per node, <data_dir>/ifs-<id>/drive-<i>.units
//   orphan_sweep_interval_ms = 600000   # the coordinator's orphan sweep (orphan_sweep.h); 0 off
//   compaction_check_ms = 30000         # each node looks at its drives this often; 0 off
//   compaction_min_garbage = 64M        # a drive is compacted once it holds this much garbage
//   compaction_min_garbage_percent = 50 # ... and garbage is at least this share of its log
//   compaction_rate = 32M               # bytes copied per second by a compaction; 0 unthrottled
// Unknown keys are refused, as every room's options struct does.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "cluster/scaleout/drive_compaction.h"
#include "cluster/scaleout/protection_policy.h"
#include "util/config.h"

namespace nasd::scaleout {

struct IfsOptions {
  std::string name;
  uint32_t volume_id = 0;
  ProtectionPolicy policy;
  uint32_t drives = 4;
  std::chrono::milliseconds orphan_sweep_interval{600000};  // 0: no periodic sweep
  CompactionPolicy compaction;  // every node's, for its own drives

  static bool is_scaleout(const ConfigSection& section) {
    return section.get("type") == "scaleout";
  }
  // Throws ConfigError naming the section and key.
  static IfsOptions from_config(const ConfigSection& section);
};

}  // namespace nasd::scaleout
