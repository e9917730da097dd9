// The MOUNT program (100005), versions 1 to 3: how a client gets the root file handle of an
// export, and learns what is exported and mounted. Only version 3's MNT reply (mountres3)
// differs from versions 1 and 2 (fhstatus); the other procedures are the same in all three.
#pragma once

#include <memory>

#include "fs/volume.h"
#include "server/nfs/exports/exports.h"
#include "server/nfs/handle/handle_codec.h"
#include "server/nfs/mount/mount_table.h"
#include "server/rpc/service.h"

namespace nasd::nfs {

class MountService : public rpc::Service {
 public:
  MountService(std::shared_ptr<fs::VolumeResolver> volumes, std::shared_ptr<Exports> exports,
               std::shared_ptr<HandleCodec> handles, std::shared_ptr<MountTable> mounts);

  uint32_t program() const override { return 100005; }
  std::string_view program_name() const override { return "mount"; }
  uint32_t low_version() const override { return 1; }
  uint32_t high_version() const override { return 3; }
  uint32_t num_procs() const override { return 6; }  // NULL, MNT, DUMP, UMNT, UMNTALL, EXPORT
  std::string_view proc_name(uint32_t proc) const override;
  // MNT and UMNT only add or drop advisory mount-table entries; repeating them is harmless.
  bool cacheable(uint32_t) const override { return false; }
  rpc::DispatchResult dispatch(const rpc::CallContext& call, std::span<const uint8_t> args,
                               std::vector<uint8_t>* results) override;

 private:
  struct Mounted;
  // Resolves a MNT path to the handle of the directory it names (mountstat3 numbers).
  uint32_t resolve(const rpc::CallContext& call, const char* path, Mounted* out) const;

  rpc::DispatchResult mnt(const rpc::CallContext& call, std::span<const uint8_t> args,
                          std::vector<uint8_t>* results);
  rpc::DispatchResult dump(std::vector<uint8_t>* results) const;
  rpc::DispatchResult umnt(const rpc::CallContext& call, std::span<const uint8_t> args);
  rpc::DispatchResult umntall(const rpc::CallContext& call);
  rpc::DispatchResult export_list(std::vector<uint8_t>* results) const;

  std::shared_ptr<fs::VolumeResolver> volumes_;
  std::shared_ptr<Exports> exports_;
  std::shared_ptr<HandleCodec> handles_;
  std::shared_ptr<MountTable> mounts_;
};

// The numeric form of a peer address ("127.0.0.1", "fd00::1"), as DUMP reports clients.
// IPv4-mapped IPv6 addresses are shown as IPv4.
std::string peer_host(const sockaddr_storage& peer);

}  // namespace nasd::nfs
