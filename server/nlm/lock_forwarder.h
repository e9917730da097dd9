// How an NLM or NSM call reaches the node that serves a volume, when the node it arrived at does
// not. server/nlm knows nothing of nodes: the cluster implements this (cluster/nlm_forwarding.h)
// the way it implements fs::Volume for the NFS calls it forwards.
//
// The design (cluster/README.md, "How NLM locks follow a volume"): the whole call, as the client
// sent it, goes to the owner with the client's address; the owner runs it through its own
// NlmService as if the client had called it directly. So the owner's lock table is the one
// truth for the volume, the owner records the client (its status monitor list and the volume's
// client list) at the client's own address, and the owner calls the client back itself:
// GRANTED for a blocked lock, the _RES call of a _MSG procedure, SM_NOTIFY after a takeover.
// The forwarding node keeps no state for the call.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "server/rpc/service.h"

namespace nasd::nlm {

class LockForwarder {
 public:
  virtual ~LockForwarder() = default;
  // Runs `call` (an NLM v4 call naming a file of `volume`, a volume this node does not serve)
  // at the volume's owner; `results` gets the owner's reply body and the return value its
  // accept status. nullopt when no owner could be asked (nobody serves the volume right now, or
  // the link is down or timed out): the caller then answers NLM4_DENIED_GRACE_PERIOD, on which
  // NLM clients retry.
  virtual std::optional<rpc::AcceptStat> forward(uint32_t volume, const rpc::CallContext& call,
                                                 std::span<const uint8_t> args,
                                                 std::vector<uint8_t>* results) = 0;
  // A client's SM_NOTIFY or FREE_ALL reached this node: every other node releases what `host`
  // holds there too (each only when `from_address` is the address the client locked from).
  // Best effort, returns at once.
  virtual void client_rebooted(const std::string& host, const std::string& from_address) = 0;
};

}  // namespace nasd::nlm
