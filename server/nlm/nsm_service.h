// The Network Status Monitor, version 1 (program 100024), as far as a server needs it:
// - SM_NOTIFY: a client's status monitor says the client rebooted, so every lock and share it
//   held here is released (only when the notice comes from the address the client locked from).
// - SM_STAT: this server's state number.
// - SM_MON, SM_UNMON, SM_UNMON_ALL, SM_SIMU_CRASH: the local lock manager's requests; accepted
//   from loopback callers only, since they change whom this server notifies. This server's own
//   lock manager monitors its clients directly (LockState), so these only edit that list.
#pragma once

#include <memory>

#include "server/nlm/lock_forwarder.h"
#include "server/nlm/lock_state.h"
#include "server/rpc/service.h"

namespace nasd::nlm {

class NsmService : public rpc::Service {
 public:
  // `forwarder` (a cluster; may be null): SM_NOTIFY is passed on to the other nodes, which
  // hold the locks a client took through this one on the volumes they serve.
  explicit NsmService(std::shared_ptr<LockState> state,
                      std::shared_ptr<LockForwarder> forwarder = nullptr)
      : state_(std::move(state)), forwarder_(std::move(forwarder)) {}

  uint32_t program() const override { return kNsmProgram; }
  std::string_view program_name() const override { return "nsm"; }
  uint32_t low_version() const override { return kNsmVersion; }
  uint32_t high_version() const override { return kNsmVersion; }
  uint32_t num_procs() const override { return 7; }
  std::string_view proc_name(uint32_t proc) const override;
  bool cacheable(uint32_t) const override { return false; }
  rpc::DispatchResult dispatch(const rpc::CallContext& call, std::span<const uint8_t> args,
                               std::vector<uint8_t>* results) override;

  struct Procs;

 private:
  std::shared_ptr<LockState> state_;
  std::shared_ptr<LockForwarder> forwarder_;
};

}  // namespace nasd::nlm
