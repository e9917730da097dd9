// NLM through any node: a lock call for a volume another node serves is forwarded to that node
// over the authenticated interconnect and answered with its reply (server/nlm/lock_forwarder.h
// says why the whole call travels with the client's address). Both ends live here:
//
// - The forwarding end (nlm::LockForwarder): asks the router who serves the volume and sends
//   the call (MessageType::NlmCall, interconnect/nlm_call_codec.h) to it, waiting at most the
//   cluster's forward timeout. A client's SM_NOTIFY or FREE_ALL is passed on to every peer
//   (MessageType::NlmClientRebooted), since each may hold locks the client took through this
//   node; each peer releases them only if the client locked from the address the notice came
//   from, as for a notice that reaches it directly.
// - The owning end: runs a forwarded call on a small pool of its own (a LOCK may write the
//   volume's client list and fsync it; the link's reader thread must not wait for that) through
//   an NlmService that forwards nothing further, with the client's address as the caller: a call
//   is answered where it lands or refused, never bounced between nodes with different views of
//   who owns the volume (if the volume left meanwhile: NLM4_DENIED_GRACE_PERIOD, and the client
//   retries).
// - Callbacks (nlm::CallbackRelay): the owner's calls back to a client that called another node
//   (GRANTED, the _RES replies) go to that node (MessageType::NlmCallback), which makes them from
//   the address the client called, on the same pool: a client accepts a GRANTED only from the
//   server it asked (server/nlm/callback_call.h). The route names the node, so it stays right
//   when the volume moves on; a route naming this node is made here.
//
// Trust: the caller's address a forwarded call names is believed because only a holder of the
// cluster key can send it, and the forwarding node checked the client against the volume's
// exports itself (the owner checks again, with the same exports).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/interconnect/call_channel.h"
#include "cluster/interconnect/interconnect_server.h"
#include "server/nlm/callback_call.h"
#include "server/nlm/lock_forwarder.h"
#include "server/nlm/lock_state.h"
#include "server/nlm/nlm_service.h"
#include "util/task_queue.h"

namespace nasd::cluster {

class NlmForwarding : public nlm::LockForwarder, public nlm::CallbackRelay {
 public:
  struct Links {
    // Which node serves the volume now (nullopt or "": nobody).
    std::function<std::optional<std::string>(uint32_t volume)> owner;
    std::function<std::shared_ptr<interconnect::CallChannel>(const std::string& node)> channel;
    std::function<std::vector<std::string>()> peers;
  };
  NlmForwarding(std::string local_node, Links links, std::chrono::milliseconds timeout);
  ~NlmForwarding() override;  // stop()

  std::optional<rpc::AcceptStat> forward(uint32_t volume, const rpc::CallContext& call,
                                         std::span<const uint8_t> args,
                                         std::vector<uint8_t>* results) override;
  void client_rebooted(const std::string& host, const std::string& from_address) override;
  nlm::CallbackAnswer relay(const nlm::CallbackCall& call,
                            std::chrono::milliseconds timeout) override;

  // The owning end: `service` runs forwarded calls (built without a forwarder of its own, see
  // no_further()), `state` takes reboot notices. Call before the handlers are used.
  void serve(std::shared_ptr<nlm::NlmService> service, std::shared_ptr<nlm::LockState> state);
  void handle_call(interconnect::IncomingRequest request);
  void handle_reboot(interconnect::IncomingRequest request);
  void handle_callback(interconnect::IncomingRequest request);
  // What the handlers do, without the link: the reply payload to an NlmCall payload from node
  // `from_node`, a reboot notice taken, and the reply to an NlmCallback payload (also for
  // tests).
  std::vector<uint8_t> answer(std::span<const uint8_t> payload, const std::string& from_node);
  void take_reboot_notice(std::span<const uint8_t> payload);
  std::vector<uint8_t> make_callback(std::span<const uint8_t> payload);
  // Ends the owning end's pool (queued calls are dropped: their forwarders time out).
  void stop();

  // The forwarder of the NlmService that answers forwarded calls: never forwards again, so a
  // volume that is not (or no longer) served here gets NLM4_DENIED_GRACE_PERIOD.
  static std::shared_ptr<nlm::LockForwarder> no_further();

 private:
  void run_call(const interconnect::IncomingRequest& request);

  const std::string local_node_;
  const Links links_;
  const std::chrono::milliseconds timeout_;
  std::shared_ptr<nlm::NlmService> service_;
  std::shared_ptr<nlm::LockState> state_;
  util::TaskQueue pool_;
};

}  // namespace nasd::cluster
