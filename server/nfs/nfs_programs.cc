#include "server/nfs/nfs_programs.h"

namespace nasd::nfs {

NfsPrograms make_nfs_programs(const Config& config, std::shared_ptr<fs::VolumeResolver> volumes) {
  const ConfigSection* node = config.section("node");
  if (!node || node->get("data_dir").empty()) throw ConfigError("[node] data_dir is required");
  const std::string data_dir = config.resolve_path(node->get("data_dir"));
  const std::string key_name = node->get("handle_key", "handle.key");
  if (key_name.empty()) throw ConfigError("[node] handle_key is empty");
  const std::string key_path = key_name.front() == '/' ? key_name : data_dir + "/" + key_name;

  NfsPrograms p;
  p.exports = Exports::from_config(config);
  p.handles = HandleCodec::from_key_file(key_path);
  p.mounts = std::make_shared<MountTable>(data_dir + "/" + kMountTableFile);
  p.nfs = std::make_shared<Nfs3Service>(volumes, p.exports, p.handles);
  p.mount = std::make_shared<MountService>(std::move(volumes), p.exports, p.handles, p.mounts);
  return p;
}

}  // namespace nasd::nfs
