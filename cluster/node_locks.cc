// The node's NLM/NSM wiring: the lock state lives beside the node's other state (data_dir/sm);
// in a failover cluster each volume's lock state follows the volume (VolumeLockFiles in the
// shared folder): handed over with it on a planned move, recovered by grace period and reclaim
// after a takeover.
#include <sstream>

#include "cluster/interconnect/router.h"
#include "cluster/nlm_forwarding.h"
#include "cluster/node.h"
#include "server/nfs/nfs_programs.h"
#include "server/nlm/lock_state.h"
#include "server/nlm/nlm_service.h"
#include "server/nlm/nsm_service.h"
#include "server/nlm/volume_handover.h"
#include "util/log.h"

namespace nasd::cluster {

std::vector<std::shared_ptr<rpc::Service>> Node::make_lock_services(
    const nfs::NfsPrograms& programs) {
  nlm::NlmOptions o = nlm::NlmOptions::from_config(plan_.config);
  if (plan_.cluster && plan_.cluster->failover)
    lock_files_ = std::make_shared<VolumeLockFiles>(
        plan_.cluster->failover->shared_dir + "/nsm",
        [this](uint32_t id) { return volume_name(id); }, o.max_hosts);
  locks_ = std::make_shared<nlm::LockState>(o, plan_.node.in_data_dir("sm"), lock_files_);
  // The grace period starts before the first request can arrive; the SM_NOTIFY calls go out
  // from the callback thread (and are retried until the clients answer).
  locks_->start();
  auto serves = [this](uint32_t id) { return serves_volume_here(id); };
  if (!plan_.cluster) {
    auto nlm_service =
        std::make_shared<nlm::NlmService>(locks_, programs.handles, programs.exports, serves);
    return {nlm_service, std::make_shared<nlm::NsmService>(locks_)};
  }
  // A cluster: calls for a volume another node serves go to it (nlm_forwarding.h), and this
  // node answers the calls its peers forward for the volumes it serves.
  NlmForwarding::Links links;
  links.owner = [this](uint32_t id) -> std::optional<std::string> {
    const interconnect::ClusterRouter* router = deployment_->router();
    return router ? router->owner(id) : std::nullopt;
  };
  links.channel = [this](const std::string& node) { return deployment_->peer_channel(node); };
  links.peers = [this] { return deployment_->peer_names(); };
  lock_forwarding_ =
      std::make_shared<NlmForwarding>(plan_.node.name, links, plan_.cluster->forward_timeout);
  lock_forwarding_->serve(std::make_shared<nlm::NlmService>(locks_, programs.handles, programs.exports,
                                                            serves, NlmForwarding::no_further()),
                          locks_);
  deployment_->set_interconnect_handler(
      interconnect::MessageType::NlmCall,
      [f = lock_forwarding_](interconnect::IncomingRequest r) { f->handle_call(std::move(r)); });
  locks_->callbacks().set_relay(lock_forwarding_);
  deployment_->set_interconnect_handler(
      interconnect::MessageType::NlmCallback,
      [f = lock_forwarding_](interconnect::IncomingRequest r) { f->handle_callback(std::move(r)); });
  deployment_->set_interconnect_handler(
      interconnect::MessageType::NlmClientRebooted,
      [f = lock_forwarding_](interconnect::IncomingRequest r) { f->handle_reboot(std::move(r)); });
  auto nlm_service = std::make_shared<nlm::NlmService>(locks_, programs.handles, programs.exports,
                                                       serves, lock_forwarding_);
  return {nlm_service, std::make_shared<nlm::NsmService>(locks_, lock_forwarding_)};
}

// Locks are granted by the node that serves the volume, while its lease holds; a node that
// forwards it could not see the owner's locks, so it forwards the call to the owner.
bool Node::serves_volume_here(uint32_t volume_id) const {
  const interconnect::ClusterRouter* router = deployment_ ? deployment_->router() : nullptr;
  if (!router || volume_id == NamespaceRoot::kVolumeId) return true;
  return router->serves_here(volume_id);
}

VolumeLockHooks Node::lock_hooks() {
  VolumeLockHooks h;
  if (!lock_files_) return h;  // only a failover cluster moves volumes
  h.opened = [this](uint32_t id) { lock_volume_opened(id); };
  h.serving = [this](uint32_t id, const std::string& address) { lock_volume_serving(id, address); };
  h.closing = [this](uint32_t id, bool handover) { lock_volume_closing(id, handover); };
  return h;
}

// Before the volume is routed here: the table its last owner handed over is adopted as it was;
// without one (that owner died or lost its lease) the locks are gone and the volume's grace
// period begins, so that no lock can be granted over one its holder is about to reclaim.
void Node::lock_volume_opened(uint32_t id) {
  std::string error;
  const std::string name = volume_name(id);
  std::optional<std::vector<uint8_t>> bytes = lock_files_->take_table(id, &error);
  nlm::VolumeHandover handover;
  if (bytes && !nlm::decode_handover(*bytes, &handover, &error)) bytes.reset();
  if (bytes && handover.volume != id) {
    error = "the table is of volume " + std::to_string(handover.volume);
    bytes.reset();
  }
  if (bytes && !locks_->adopt_volume(handover)) {
    error = "the table does not fit or does not agree with itself";
    bytes.reset();
  }
  if (bytes) {
    util::log("nlm").info("volume " + name + ": lock table handed over (" +
                          std::to_string(handover.table.locks.size()) + " lock(s), " +
                          std::to_string(handover.table.waiters.size()) + " waiting, " +
                          std::to_string(handover.table.shares.size()) + " share(s))");
    std::lock_guard lock(recovering_mu_);
    recovering_.erase(id);
    return;
  }
  if (!error.empty()) util::log("nlm").warn("volume " + name + ": lock table not adopted: " + error);
  locks_->begin_volume_grace(id);
  std::lock_guard lock(recovering_mu_);
  recovering_.insert(id);
}

// Once the volume's address answers here, its clients are told that the server they locked
// at (that address) restarted: they reclaim, in the grace period, here.
void Node::lock_volume_serving(uint32_t id, const std::string& address) {
  {
    std::lock_guard lock(recovering_mu_);
    if (!recovering_.erase(id)) return;
  }
  std::vector<nlm::MonitoredHost> clients = locks_->volume_clients(id);
  util::log("nlm").info("volume " + volume_name(id) + ": grace period, SM_NOTIFY for " + address +
                        " to " + std::to_string(clients.size()) + " client(s)");
  locks_->notify(clients, address);
}

// Routed away and its address released: with the lease still held, the table goes with the
// volume (taken out first, so no lock changes after it is written); otherwise it is lost.
void Node::lock_volume_closing(uint32_t id, bool handover) {
  {
    std::lock_guard lock(recovering_mu_);
    recovering_.erase(id);
  }
  if (!handover) {
    locks_->drop_volume(id);
    return;
  }
  nlm::VolumeHandover table = locks_->take_volume(id);
  std::string error;
  if (!lock_files_->save_table(id, nlm::encode_handover(table), &error))
    util::log("nlm").error("volume " + volume_name(id) + ": lock table not handed over (" + error +
                           "): its next owner begins a grace period and the clients reclaim");
}

std::string Node::locks_status() const {
  if (!locks_) return "locks: NLM not running\n";
  return locks_->describe([this](uint32_t id) -> std::string {
    if (id == NamespaceRoot::kVolumeId) return "r";
    return volume_name(id);
  });
}

}  // namespace nasd::cluster
