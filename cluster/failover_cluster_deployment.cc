#include "cluster/failover_cluster_deployment.h"

#include <stdexcept>

#include "cluster/address_pool_server.h"
#include "cluster/interconnect/peer_client.h"
#include "cluster/interconnect/router.h"
#include "cluster/lease_authority_factory.h"
#include "cluster/scaleout/ifs_node.h"
#include "cluster/scaleout/ifs_options.h"

namespace nasd::cluster {

FailoverClusterDeployment::FailoverClusterDeployment(const NodePlan& plan, HostedVolumes& hosted)
    : ClusterDeployment(plan, hosted) {}

FailoverClusterDeployment::~FailoverClusterDeployment() = default;

void FailoverClusterDeployment::start_scaleout() {
  const ConfigSection* section = nullptr;
  for (const ConfigSection* s : plan_.config.sections("volume")) {
    if (!scaleout::IfsOptions::is_scaleout(*s)) continue;
    if (section) throw ConfigError("[volume " + s->name() + "]: one scale-out volume per cluster ([volume " + section->name() + "] is one)");
    section = s;
  }
  if (!section) return;
  const scaleout::IfsOptions o = scaleout::IfsOptions::from_config(*section);
  // Node ids are the members' positions in the cluster config (the same on every node).
  scaleout::IfsNode::Options no;
  no.dir = plan_.node.in_data_dir("ifs-" + std::to_string(o.volume_id));
  no.volume = o.volume_id;
  no.drives = o.drives;
  std::map<std::string, uint32_t> ids;
  for (size_t i = 0; i < plan_.cluster->members.size(); i++) {
    const std::string& name = plan_.cluster->members[i].name;
    ids[name] = static_cast<uint32_t>(i + 1);
    no.nodes.push_back(static_cast<uint32_t>(i + 1));
    if (name == plan_.node.name) no.self = static_cast<uint32_t>(i + 1);
  }
  std::string error;
  scaleout_ = scaleout::IfsNode::open(no, &error);
  if (!scaleout_) throw std::runtime_error("scale-out drives in " + no.dir + ": " + error);
  for (const auto& [name, peer] : peers_)
    if (auto it = ids.find(name); it != ids.end()) scaleout_->add_peer(it->second, peer.get());
  hosted_.set_scaleout_cluster(scaleout_.get());
}

void FailoverClusterDeployment::open_volumes() {
  for (const PlannedVolume& v : plan_.volumes) router_->add_remote(v.id);
}

void FailoverClusterDeployment::start(const rpc::RpcServerOptions& options,
                                      const std::vector<std::shared_ptr<rpc::Service>>& programs) {
  // The node's own address, unless it is its EVS (the pair form): then it moves with the volumes.
  bool own_address_moves = false;
  for (const EvsOptions& e : plan_.cluster->evs)
    own_address_moves |= e.node == plan_.node.name && e.is_node_address;
  if (!own_address_moves) {
    node_server_ = std::make_unique<VirtualServer>(plan_.node.name, options, programs, true);
    if (!node_server_->bind())
      throw std::runtime_error("cannot serve NFS on " + node_server_->describe());
  }
  ClusterFailoverWiring w;
  w.self = plan_.node.name;
  w.cluster = &*plan_.cluster;
  w.config = &plan_.config;
  w.data_dir = plan_.node.data_dir;
  w.mirror_mode = plan_.journal.enabled ? plan_.journal.mode : nvram::DurabilityMode::Process;
  w.mirror_server.credentials = plan_.link;
  if (!plan_.cluster->allowed_peers.empty())
    w.mirror_server.address_allowed = [list = plan_.cluster->allowed_peers](const std::string& a) {
      return list.allows(a);
    };
  w.volumes = &hosted_;
  w.router = router_.get();
  w.authority = make_lease_authority(*plan_.cluster);
  for (const auto& [name, peer] : peers_) w.peers[name] = peer;
  w.make_evs = [options, programs, self = plan_.node.name](const EvsOptions& e) {
    rpc::RpcServerOptions eo = options;
    eo.bind_address = e.listen;
    eo.ports = {e.nfs_port, e.mount_port};
    if (eo.ports[0] == eo.ports[1]) eo.ports.pop_back();
    // The pair form's own address registers with the portmapper, as a node's address does.
    return std::make_unique<VirtualServer>(e.name, eo, programs, e.is_node_address && e.node == self);
  };
  w.locks = lock_hooks_;
  w.serving_log = serving_log_.get();
  std::vector<PoolOptions> pools = pools_from_config(plan_.config, *plan_.cluster);
  failover_ = std::make_unique<ClusterFailover>(std::move(w));
  start_scaleout();
  start_interconnect([this](interconnect::InterconnectServer& s) {
    failover_->attach(s);
    if (scaleout_) scaleout_->attach(s);
  });
  if (scaleout_) scaleout_->start();
  failover_->start();
  if (!pools.empty()) {
    const FailoverOptions& f = *plan_.cluster->failover;
    pools_ = std::make_unique<AddressPoolServer>(
        plan_.node.name, std::move(pools),
        [options, programs](const std::string& name, const std::string& address, uint16_t nfs,
                            uint16_t mount) {
          rpc::RpcServerOptions po = options;
          po.bind_address = address;
          po.ports = {nfs, mount};
          if (nfs == mount) po.ports.pop_back();
          return std::make_unique<VirtualServer>(name, po, programs, false);
        },
        [this] { return failover_->peers_alive(); }, std::chrono::milliseconds(f.heartbeat_ms),
        std::chrono::milliseconds(f.startup_grace_ms));
    pools_->start();
  }
}

// Hands this node's volumes and EVSes over (clean close, leases released).
void FailoverClusterDeployment::stop() {
  if (pools_) pools_->stop();
  if (failover_) failover_->stop();
  if (node_server_) node_server_->release();
  stop_interconnect();
  if (scaleout_) scaleout_->stop();
}

std::string FailoverClusterDeployment::status() const {
  return "cluster " + plan_.cluster->name + ": failover cluster of " +
         std::to_string(plan_.cluster->members.size()) + " nodes (authority " +
         membership::authority_kind_name(plan_.cluster->authority.kind) + ")\n" + failover_->status() +
         (pools_ ? pools_->status() : std::string()) + peer_lines();
}

std::string FailoverClusterDeployment::why_no_volume_create() const {
  return "volume create is not available in a failover cluster: every node must know every "
         "volume, so add its [volume], [export] and EVS entry to the cluster config and restart "
         "the nodes one after the other";
}

std::string FailoverClusterDeployment::move(const std::string& what,
                                            const std::vector<std::string>& args) {
  return what == "evs" ? failover_->evs_command(args) : failover_->volume_move_command(args);
}

std::string FailoverClusterDeployment::failover(bool back) {
  return back ? failover_->failback() : failover_->failover();
}

}  // namespace nasd::cluster
