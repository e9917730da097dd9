#include "server/nfs/nfs_programs.h"

namespace nasd::nfs {

NfsPrograms make_nfs_programs(const Config& config, std::shared_ptr<fs::VolumeResolver> volumes,
                              const std::string& data_dir, const std::string& handle_key_path) {
  if (data_dir.empty()) throw ConfigError("a data folder is required for the mount table");
  if (handle_key_path.empty()) throw ConfigError("a handle key file is required");

  NfsPrograms p;
  p.exports = Exports::from_config(config);
  p.handles = HandleCodec::from_key_file(handle_key_path);
  p.mounts = std::make_shared<MountTable>(data_dir + "/" + kMountTableFile);
  p.nfs = std::make_shared<Nfs3Service>(volumes, p.exports, p.handles);
  p.mount = std::make_shared<MountService>(std::move(volumes), p.exports, p.handles, p.mounts);
  return p;
}

}  // namespace nasd::nfs
