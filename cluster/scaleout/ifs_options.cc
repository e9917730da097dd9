#include "cluster/scaleout/ifs_options.h"

namespace nasd::scaleout {

IfsOptions IfsOptions::from_config(const ConfigSection& section) {
  const std::string where = "[volume " + section.name() + "] ";
  std::vector<std::string> unknown = section.unknown_keys({"id", "type", "protection", "drives"});
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
  return o;
}

}  // namespace nasd::scaleout
