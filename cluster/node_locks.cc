// The node's NLM/NSM wiring: the lock state lives beside the node's other state (data_dir/sm),
// its client list is mirrored to the shared folder in an HA pair, and a volume that arrives by
// failover or failback starts its own grace period and its clients are told to reclaim.
#include <sstream>

#include "cluster/interconnect/router.h"
#include "cluster/node.h"
#include "server/nfs/nfs_programs.h"
#include "server/nlm/lock_state.h"
#include "server/nlm/nlm_service.h"
#include "server/nlm/nsm_service.h"

namespace nasd::cluster {
namespace {

std::string clients_file(const std::string& shared_dir, const std::string& node) {
  return shared_dir + "/nsm/" + node + ".clients";
}

}  // namespace

std::vector<std::shared_ptr<rpc::Service>> Node::make_lock_services(
    const nfs::NfsPrograms& programs) {
  nlm::NlmOptions o = nlm::NlmOptions::from_config(plan_.config);
  std::string mirror;
  if (plan_.cluster && plan_.cluster->failover)
    mirror = clients_file(plan_.cluster->failover->shared_dir, plan_.node.name);
  locks_ = std::make_shared<nlm::LockState>(o, plan_.node.in_data_dir("sm"), mirror);
  // The grace period starts before the first request can arrive; the SM_NOTIFY calls go out
  // from the callback thread (and are retried until the clients answer).
  locks_->start();
  auto nlm_service = std::make_shared<nlm::NlmService>(
      locks_, programs.handles, programs.exports,
      [this](uint32_t id) { return serves_volume_here(id); });
  return {nlm_service, std::make_shared<nlm::NsmService>(locks_)};
}

// Locks are granted by the node that serves the volume; a node that forwards it could not see
// the owner's locks.
bool Node::serves_volume_here(uint32_t volume_id) const {
  const interconnect::ClusterRouter* router = deployment_ ? deployment_->router() : nullptr;
  if (!router || volume_id == NamespaceRoot::kVolumeId) return true;
  auto owner = router->owner(volume_id);
  return owner && *owner == plan_.node.name;
}

// A volume opened by failover (the partner's) or failback (our own, back from the partner):
// its locks were held at the other node, so its clients, on the other node's list, are told
// that the server they locked at (that volume's address) restarted, and reclaim here.
void Node::lock_volume_opened(uint32_t id, bool home) {
  if (!locks_ || !plan_.cluster || !plan_.cluster->failover) return;
  locks_->begin_volume_grace(id);
  // The node that served it until now: for one of ours, the node covering us; for a covered
  // node's, that node. Its clients are told the volume's address restarted.
  const ClusterOptions& cluster = *plan_.cluster;
  const EvsOptions* evs = cluster.evs_of_volume(volume_name(id));
  const MemberOptions* self = cluster.member(plan_.node.name);
  if (!evs || !self) return;
  const std::string from = home ? self->mirror_to : evs->node;
  if (from.empty()) return;
  auto clients = nlm::StatusMonitor::load_hosts(clients_file(cluster.failover->shared_dir, from));
  locks_->notify(clients, home && evs->is_node_address ? locks_->options().notify_name : evs->listen);
}

std::string Node::locks_status() const {
  if (!locks_) return "locks: NLM not running\n";
  return locks_->describe([this](uint32_t id) -> std::string {
    if (id == NamespaceRoot::kVolumeId) return "r";
    return volume_name(id);
  });
}

}  // namespace nasd::cluster
