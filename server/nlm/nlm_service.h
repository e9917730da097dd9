// The Network Lock Manager, version 4 (program 100021): what NFSv3 clients use for fcntl/flock
// locks and DOS share modes. Every procedure is one function in one table (nlm_procs.cc).
//
// A call names its file by NFS handle; the handle's tag is verified, and the caller must be a
// client some export of that volume lists. Locks are granted only for volumes this node serves
// itself (`serves_volume`). A call for a volume served elsewhere goes, whole and unchanged, to
// the volume's owner through `forwarder` (lock_forwarder.h), which answers it as if the client
// had called it there; NLM4_DENIED_GRACE_PERIOD (the client retries) when the owner cannot be
// asked. Without a forwarder (a single server) such a call gets NLM4_FAILED.
//
// The asynchronous _MSG procedures do what their synchronous twins do and send the result back
// as the matching _RES call to the caller's lock manager; their own RPC reply is empty.
// Versions 1 and 3 (32-bit offsets) are not served: Linux and BSD clients use version 4 with
// NFSv3.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "server/nfs/exports/exports.h"
#include "server/nfs/handle/handle_codec.h"
#include "server/nlm/lock_forwarder.h"
#include "server/nlm/lock_state.h"
#include "server/rpc/service.h"

namespace nasd::nlm {

class NlmService : public rpc::Service {
 public:
  NlmService(std::shared_ptr<LockState> state, std::shared_ptr<nfs::HandleCodec> handles,
             std::shared_ptr<nfs::Exports> exports, std::function<bool(uint32_t)> serves_volume,
             std::shared_ptr<LockForwarder> forwarder = nullptr);

  uint32_t program() const override { return kNlmProgram; }
  std::string_view program_name() const override { return "nlm"; }
  uint32_t low_version() const override { return kNlmVersion; }
  uint32_t high_version() const override { return kNlmVersion; }
  uint32_t num_procs() const override { return 24; }
  std::string_view proc_name(uint32_t proc) const override;
  // LOCK and UNLOCK are idempotent for one owner; the replies need no cache.
  bool cacheable(uint32_t) const override { return false; }
  rpc::DispatchResult dispatch(const rpc::CallContext& call, std::span<const uint8_t> args,
                               std::vector<uint8_t>* results) override;

  // What the procedures share (nlm_procs.cc).
  struct Procs;

 private:
  std::shared_ptr<LockState> state_;
  std::shared_ptr<nfs::HandleCodec> handles_;
  std::shared_ptr<nfs::Exports> exports_;
  std::function<bool(uint32_t)> serves_volume_;
  std::shared_ptr<LockForwarder> forwarder_;
};

}  // namespace nasd::nlm
