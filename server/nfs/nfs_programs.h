// Everything the daemon needs to serve NFS: the NFSv3 and MOUNT services built from the
// configuration, ready for rpc::RpcServer::add_service().
//
//   auto programs = nasd::nfs::make_nfs_programs(config, resolver, data_dir, key_path);
//   server.add_service(programs.nfs);
//   server.add_service(programs.mount);
#pragma once

#include <memory>
#include <string>

#include "fs/volume.h"
#include "server/nfs/exports/exports.h"
#include "server/nfs/handle/handle_codec.h"
#include "server/nfs/mount/mount_service.h"
#include "server/nfs/mount/mount_table.h"
#include "server/nfs/nfs3/nfs3_service.h"
#include "util/config.h"

namespace nasd::nfs {

struct NfsPrograms {
  std::shared_ptr<Exports> exports;
  std::shared_ptr<HandleCodec> handles;
  std::shared_ptr<MountTable> mounts;
  std::shared_ptr<Nfs3Service> nfs;
  std::shared_ptr<MountService> mount;
};

// The mount table's file inside data_dir.
inline constexpr const char* kMountTableFile = "rmtab";

// Reads every [export PATH] section; `data_dir` and `handle_key_path` are the node's resolved
// data folder and handle key file (created on first start). The mount table lives in
// data_dir/rmtab. Throws ConfigError for bad exports or an empty data_dir,
// std::runtime_error when the key or mount table cannot be read or created.
NfsPrograms make_nfs_programs(const Config& config, std::shared_ptr<fs::VolumeResolver> volumes,
                              const std::string& data_dir, const std::string& handle_key_path);

}  // namespace nasd::nfs
