#include "cluster/cluster_deployment.h"

#include <sstream>
#include <stdexcept>

#include "cluster/interconnect/interconnect_server.h"
#include "cluster/interconnect/peer_client.h"
#include "cluster/interconnect/router.h"
#include "cluster/interconnect/volume_server.h"
#include "util/log.h"

namespace nasd::cluster {

ClusterDeployment::ClusterDeployment(const NodePlan& plan, HostedVolumes& hosted)
    : plan_(plan), hosted_(hosted) {
  // Forwarded calls wait at most forward_timeout for the owner, and at most forward_slots of
  // them are in flight to one owner at once (they park: no executor thread waits for them).
  interconnect::RemoteVolumeOptions remote;
  remote.call_timeout = plan_.cluster->forward_timeout;
  remote.max_in_flight = plan_.cluster->forward_slots;
  router_ = std::make_shared<interconnect::ClusterRouter>(
      plan_.node.name,
      [this](const std::string& node) -> std::shared_ptr<interconnect::CallChannel> {
        auto it = peers_.find(node);
        return it == peers_.end() ? nullptr : it->second;
      },
      remote);
  std::string error;
  serving_log_ = ServingLog::open(plan_.node.data_dir + "/serving.log", &error);
  if (!serving_log_)
    util::log("cluster").warn("no serving log (the fault drill cannot check this node): " + error);
  for (const auto& p : plan_.cluster->peers)
    peers_[p.name] = make_peer_link(p.name, p.host, p.port);
}

ClusterDeployment::~ClusterDeployment() = default;

std::shared_ptr<fs::VolumeResolver> ClusterDeployment::resolver() { return router_; }

// Each volume this node owns is served here; a peer's is forwarded to it and its root is
// learned from the owner.
void ClusterDeployment::open_volumes() {
  for (const PlannedVolume& v : plan_.volumes) {
    if (v.owner.empty()) {
      if (serving_log_) serving_log_->started(v.name, 0);
      served_here_.push_back(v.name);
      serve_local(hosted_.open(*plan_.config.section("volume", v.name), plan_.config, plan_.node.data_dir));
      if (serving_log_) serving_log_->ready(v.name, 0);
      continue;
    }
    router_->add_remote(v.id);
    router_->set_owner(v.id, v.owner);
    util::log("cluster").info("volume " + v.name + " (id " + std::to_string(v.id) + "): owned by " +
                              v.owner + ", forwarded over the interconnect");
  }
}

void ClusterDeployment::serve_local(std::shared_ptr<fs::Volume> volume) {
  uint32_t id = volume->id();
  router_->add_local(std::move(volume));
  router_->set_owner(id, plan_.node.name);
}

void ClusterDeployment::start(const rpc::RpcServerOptions& options,
                              const std::vector<std::shared_ptr<rpc::Service>>& programs) {
  home_server_ = std::make_unique<VirtualServer>(plan_.node.name, options, programs, true);
  if (!home_server_->bind()) throw std::runtime_error("cannot serve NFS on " + home_server_->describe());
  // An N-node cluster without failover: this node's EVSes are served here for good.
  for (const EvsOptions& e : plan_.cluster->evs) {
    if (e.node != plan_.node.name) continue;
    rpc::RpcServerOptions eo = options;
    eo.bind_address = e.listen;
    eo.ports = {e.nfs_port, e.mount_port};
    if (eo.ports[0] == eo.ports[1]) eo.ports.pop_back();
    evs_servers_.push_back(std::make_unique<VirtualServer>(e.name, eo, programs, false));
    if (!evs_servers_.back()->bind())
      throw std::runtime_error("cannot serve NFS on " + evs_servers_.back()->describe());
  }
  start_interconnect({});
}

void ClusterDeployment::start_interconnect(
    const std::function<void(interconnect::InterconnectServer&)>& attach) {
  const ClusterOptions& c = *plan_.cluster;
  interconnect::InterconnectServerOptions io;
  io.host = c.host;
  io.port = c.port;
  io.cluster_name = c.name;
  io.local_node = plan_.node.name;
  io.credentials = plan_.link;
  for (const auto& p : c.peers) io.peers.push_back(p.name);
  if (!c.allowed_peers_open.empty()) util::log("cluster").warn(c.allowed_peers_open);
  if (!c.allowed_peers.empty()) io.address_allowed = peer_address_gate();
  io.log = [](const std::string& line) { util::log("cluster").warn(line); };
  interconnect_ = std::make_unique<interconnect::InterconnectServer>(io);
  // This node, as an owner, answers a forwarded call within half the forwarders' deadline
  // (the same [cluster] forward_timeout_ms on every node), refusing it JUKEBOX unrun rather
  // than waiting longer for journal space: see VolumeServerOptions::answer_within.
  interconnect::VolumeServerOptions vs;
  vs.answer_within = plan_.cluster->forward_timeout / 2;
  volume_server_ =
      std::make_unique<interconnect::VolumeServer>(&router_->served_here(), vs);
  volume_server_->attach(*interconnect_);
  for (const auto& [type, handler] : extra_handlers_) interconnect_->set_handler(type, handler);
  if (attach) attach(*interconnect_);
  interconnect_->start();
  for (auto& [name, peer] : peers_) peer->start();
  util::log("cluster").info("cluster " + c.name + ": interconnect on " + c.host + ":" +
                            std::to_string(interconnect_->port()) + ", " +
                            std::to_string(peers_.size()) + " peer(s)");
}

void ClusterDeployment::stop() {
  if (home_server_) home_server_->release();
  for (auto& vs : evs_servers_) vs->release();
  stop_interconnect();
  // Static ownership: nobody else may serve these volumes, so their end needs no lease bound.
  if (serving_log_)
    for (const std::string& name : served_here_) serving_log_->stopped(name, 0, 0, 0);
}

std::shared_ptr<interconnect::CallChannel> ClusterDeployment::peer_channel(
    const std::string& node) const {
  auto it = peers_.find(node);
  return it == peers_.end() ? nullptr : it->second;
}

std::vector<std::string> ClusterDeployment::peer_names() const {
  std::vector<std::string> names;
  for (const auto& [name, peer] : peers_) names.push_back(name);
  return names;
}

void ClusterDeployment::admit_peer(const std::string& name, const std::string& host) {
  {
    std::lock_guard lock(allowed_mu_);
    if (!allowed_loaded_) allowed_ = plan_.cluster->allowed_peers, allowed_loaded_ = true;
    if (plan_.cluster->allowed_peers_default) allowed_.add_address(host);
  }
  if (interconnect_) interconnect_->admit_peer(name);
}

std::function<bool(const std::string&)> ClusterDeployment::peer_address_gate() {
  return [this](const std::string& address) {
    std::lock_guard lock(allowed_mu_);
    if (!allowed_loaded_) allowed_ = plan_.cluster->allowed_peers, allowed_loaded_ = true;
    return allowed_.allows(address);
  };
}

// Peers' forwarded calls stop before the volumes they run on close.
void ClusterDeployment::stop_interconnect() {
  if (interconnect_) interconnect_->stop();
  for (auto& [name, peer] : peers_) peer->stop();
}

std::string ClusterDeployment::status() const {
  std::ostringstream out;
  out << "cluster " << plan_.cluster->name << ", node " << plan_.node.name
      << ": static ownership, no failover\n";
  for (uint32_t id : router_->volume_ids()) {
    auto owner = router_->owner(id);
    out << "volume id " << id << ": owned by "
        << (owner && *owner == plan_.node.name ? "this node" : owner ? *owner : "nobody") << "\n";
  }
  return out.str() + peer_lines();
}

std::vector<std::pair<std::string, bool>> ClusterDeployment::peer_links() const {
  std::vector<std::pair<std::string, bool>> out;
  for (const auto& [name, peer] : peers_) out.emplace_back(name, peer->connected());
  return out;
}

std::shared_ptr<interconnect::PeerClient> ClusterDeployment::make_peer_link(
    const std::string& name, const std::string& host, uint16_t port) {
  interconnect::PeerClientOptions po;
  po.host = host;
  po.port = port;
  // From this node's own interconnect address: to its peers (and to a partition or a
  // firewall) the node is one address, whatever the routes would pick.
  po.source_host = plan_.cluster->host;
  po.cluster_name = plan_.cluster->name;
  po.local_node = plan_.node.name;
  po.expected_peer = name;
  po.credentials = plan_.link;
  return std::make_shared<interconnect::PeerClient>(po);
}

std::string ClusterDeployment::peer_lines() const {
  std::string out;
  for (const auto& [name, peer] : peers_)
    out += "peer " + name + ": interconnect " + (peer->connected() ? "up" : "down") + "\n";
  if (interconnect_)
    out += "interconnect: " + std::to_string(interconnect_->refused_count()) +
           " connection(s) refused (no cluster key, not a peer, or not an allowed address), " +
           std::to_string(interconnect_->fenced_count()) +
           " stale connection(s) of a peer fenced when it reconnected\n";
  return out;
}

}  // namespace nasd::cluster
