#include "cluster/ha_pair_deployment.h"

#include "cluster/interconnect/peer_client.h"
#include "cluster/interconnect/router.h"
#include "cluster/lease_authority_factory.h"

namespace nasd::cluster {

HaPairDeployment::HaPairDeployment(const NodePlan& plan, HostedVolumes& hosted)
    : ClusterDeployment(plan, hosted) {}

HaPairDeployment::~HaPairDeployment() = default;

void HaPairDeployment::open_volumes() {
  for (const PlannedVolume& v : plan_.volumes) {
    router_->add_remote(v.id);
    router_->set_owner(v.id, plan_.cluster->partner().name);
  }
}

// Each address is served by whichever node serves its volumes.
void HaPairDeployment::start(const rpc::RpcServerOptions& options,
                             const std::vector<std::shared_ptr<rpc::Service>>& programs) {
  const PeerOptions& partner = plan_.cluster->partner();
  rpc::RpcServerOptions po = options;
  po.bind_address = partner.vs_listen;
  po.ports = {partner.vs_nfs_port, partner.vs_mount_port};
  if (po.ports[0] == po.ports[1]) po.ports.pop_back();
  FailoverWiring w;
  w.self = plan_.node.name;
  w.options = *plan_.cluster->failover;
  w.partner = partner;
  w.config = &plan_.config;
  w.data_dir = plan_.node.data_dir;
  w.mirror_mode = plan_.journal.enabled ? plan_.journal.mode : nvram::DurabilityMode::Process;
  w.mirror_server.credentials = plan_.link;
  w.mirror_server.primary = partner.name;
  if (!plan_.cluster->allowed_peers.empty())
    w.mirror_server.address_allowed = [list = plan_.cluster->allowed_peers](const std::string& a) {
      return list.allows(a);
    };
  w.volumes = &hosted_;
  w.router = router_.get();
  w.authority = make_lease_authority(*plan_.cluster);
  w.partner_channel = peers_.at(partner.name);
  w.home_server = std::make_unique<VirtualServer>(plan_.node.name, options, programs, true);
  w.partner_server = std::make_unique<VirtualServer>(partner.name, po, programs, false);
  w.volume_opened = volume_opened_;
  w.volume_closed = volume_closed_;
  w.serving_log = serving_log_.get();
  failover_ = std::make_unique<Failover>(std::move(w));
  start_interconnect([this](interconnect::InterconnectServer& s) { failover_->attach(s); });
  failover_->start();
}

// Hands this node's volumes and address to the partner (clean close, leases released).
void HaPairDeployment::stop() {
  if (failover_) failover_->stop();
  stop_interconnect();
}

std::string HaPairDeployment::status() const {
  return "cluster " + plan_.cluster->name + ": HA pair\n" + failover_->status() + peer_lines();
}

std::string HaPairDeployment::why_no_volume_create() const {
  return "volume create is not available in a failover pair: both nodes must know every volume, "
         "so add its [volume] and [export] to both configs and restart them one after the other";
}

std::string HaPairDeployment::failover(bool back) {
  return back ? failover_->failback() : failover_->failover();
}

}  // namespace nasd::cluster
