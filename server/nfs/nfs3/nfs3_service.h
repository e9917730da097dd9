// The NFS version 3 program (100003) as an rpc::Service.
#pragma once

#include <memory>

#include "fs/volume.h"
#include "server/nfs/exports/exports.h"
#include "server/nfs/handle/handle_codec.h"
#include "server/rpc/service.h"

namespace nasd::nfs {

namespace nfs3 {
struct Nfs3Deps;
}

class Nfs3Service : public rpc::Service {
 public:
  Nfs3Service(std::shared_ptr<fs::VolumeResolver> volumes, std::shared_ptr<Exports> exports,
              std::shared_ptr<HandleCodec> handles);
  ~Nfs3Service() override;

  uint32_t program() const override { return 100003; }
  std::string_view program_name() const override { return "nfs"; }
  uint32_t low_version() const override { return 3; }
  uint32_t high_version() const override { return 3; }
  uint32_t num_procs() const override;
  std::string_view proc_name(uint32_t proc) const override;
  bool cacheable(uint32_t proc) const override;
  // True when the call's first argument, which for every NFSv3 procedure is a file handle,
  // verifies and names an export that lists the caller and accepts its source port.
  bool may_cache(const rpc::CallContext& call, std::span<const uint8_t> args) const override;
  // A WRITE's data at a block-aligned file offset: where it starts in the arguments, so that
  // the volume may keep the received pages as its cache blocks (rpc::Service).
  std::optional<size_t> bulk_payload_offset(const rpc::CallContext& call,
                                            std::span<const uint8_t> args) const override;
  // Every procedure checks and decodes before its one Volume call, with nothing a second run
  // would repeat; so a call whose volume is forwarded may park (util/resumable_call.h).
  bool resumable() const override { return true; }
  rpc::DispatchResult dispatch(const rpc::CallContext& call, std::span<const uint8_t> args,
                               std::vector<uint8_t>* results) override;
  // Every procedure but FSINFO and PATHCONF (the table's on_loop column), answered on the
  // event loop when the volume's non-blocking attempt can (for WRITE: UNSTABLE data taken from
  // memory; for a forwarded volume: sent from the loop, parked, finished where the owner's
  // answer arrives; a local volume takes no name-space mutation there); the same procedure
  // functions as dispatch().
  std::optional<rpc::DispatchResult> dispatch_inline(const rpc::CallContext& call,
                                                     std::span<const uint8_t> args,
                                                     std::vector<uint8_t>* results) override;

 private:
  // dispatch() and dispatch_inline(): `*would_block` when a call on the event loop met a
  // volume attempt that would block (its result is then meaningless).
  rpc::DispatchResult run(const rpc::CallContext& call, std::span<const uint8_t> args,
                          std::vector<uint8_t>* results, bool on_event_loop, bool* would_block);

  std::unique_ptr<nfs3::Nfs3Deps> deps_;
};

}  // namespace nasd::nfs
