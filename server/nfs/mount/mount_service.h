// The MOUNT program (100005), versions 1 to 3: how a client gets the root file handle of an
// export, and learns what is exported and mounted. Only version 3's MNT reply (mountres3)
// differs from versions 1 and 2 (fhstatus); the other procedures are the same in all three.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "fs/volume.h"
#include "server/nfs/exports/exports.h"
#include "server/nfs/handle/handle_codec.h"
#include "server/nfs/mount/mount_table.h"
#include "server/rpc/service.h"

namespace nasd::nfs {

// How MNT meets a volume that is changing hands (a takeover, a failback, a planned move): the
// volume answers NFS3ERR_JUKEBOX, or its root is not known yet (a forwarded volume whose new
// owner has not opened it). MOUNT has no "try again later" status -- a Linux mount gives up on
// any error it gets --, so MNT waits for the volume to answer and then answers itself.
struct MountOptions {
  // How long one MNT waits at most; 0 answers at once (a node whose volumes never move). Past
  // it, a volume still changing hands is answered MNT3ERR_SERVERFAULT.
  std::chrono::milliseconds busy_wait{0};
  // MNT calls waiting at once, each on an executor thread; the ones beyond are answered at once.
  int max_waiting = 4;
};

class MountService : public rpc::Service {
 public:
  MountService(std::shared_ptr<fs::VolumeResolver> volumes, std::shared_ptr<Exports> exports,
               std::shared_ptr<HandleCodec> handles, std::shared_ptr<MountTable> mounts,
               MountOptions options = {});

  uint32_t program() const override { return 100005; }
  std::string_view program_name() const override { return "mount"; }
  uint32_t low_version() const override { return 1; }
  uint32_t high_version() const override { return 3; }
  uint32_t num_procs() const override { return 6; }  // NULL, MNT, DUMP, UMNT, UMNTALL, EXPORT
  std::string_view proc_name(uint32_t proc) const override;
  // MNT and UMNT only add or drop advisory mount-table entries; repeating them is harmless.
  bool cacheable(uint32_t) const override { return false; }
  // MNT runs here, on an executor thread, never on the event loop (no dispatch_inline): it may
  // wait for a volume that is changing hands (MountOptions).
  rpc::DispatchResult dispatch(const rpc::CallContext& call, std::span<const uint8_t> args,
                               std::vector<uint8_t>* results) override;

  // MNT calls waiting for a volume right now.
  int waiting() const { return waiting_.load(); }
  // Ends every wait now and makes later MNTs answer at once (the node is stopping: its executor
  // must not be held up by a wait).
  void stop_waiting();

 private:
  struct Mounted;
  // Resolves a MNT path to the handle of the directory it names (mountstat3 numbers). *busy:
  // the failure is a volume changing hands (worth waiting for).
  uint32_t resolve(const rpc::CallContext& call, const char* path, Mounted* out, bool* busy) const;
  // resolve(), again until the volume is no longer busy, within options_.busy_wait.
  uint32_t resolve_waiting(const rpc::CallContext& call, const char* path, Mounted* out);

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
  const MountOptions options_;
  std::atomic<int> waiting_{0};
  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
  bool stopped_ = false;  // guarded by wait_mu_
};

// The numeric form of a peer address ("127.0.0.1", "fd00::1"), as DUMP reports clients.
// IPv4-mapped IPv6 addresses are shown as IPv4.
std::string peer_host(const sockaddr_storage& peer);

}  // namespace nasd::nfs
