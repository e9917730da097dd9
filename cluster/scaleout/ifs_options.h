// [volume NAME] with `type = scaleout`: the scale-out volume striped over every node.
//   [volume ifs]
//   id = 100
//   type = scaleout
//   protection = +2d:1n      # OneFS notation (protection_policy.h); the default
//   drives = 4               # drives (backing files) per node, <data_dir>/ifs-<id>/drive-<i>.units
// Unknown keys are refused, as every room's options struct does.
#pragma once

#include <cstdint>
#include <string>

#include "cluster/scaleout/protection_policy.h"
#include "util/config.h"

namespace nasd::scaleout {

struct IfsOptions {
  std::string name;
  uint32_t volume_id = 0;
  ProtectionPolicy policy;
  uint32_t drives = 4;

  static bool is_scaleout(const ConfigSection& section) {
    return section.get("type") == "scaleout";
  }
  // Throws ConfigError naming the section and key.
  static IfsOptions from_config(const ConfigSection& section);
};

}  // namespace nasd::scaleout
