#include "cluster/failover_cluster_deployment.h"

#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "cluster/address/address_record.h"
#include "cluster/address/hosted_address.h"
#include "cluster/address_pool_server.h"
#include "cluster/ifs_edge_resolver.h"
#include "cluster/interconnect/peer_client.h"
#include "cluster/interconnect/router.h"
#include "cluster/lease_authority_factory.h"
#include "cluster/scaleout/ifs_node.h"
#include "cluster/scaleout/ifs_options.h"
#include "util/log.h"

namespace nasd::cluster {

FailoverClusterDeployment::FailoverClusterDeployment(const NodePlan& plan, HostedVolumes& hosted)
    : ClusterDeployment(plan, hosted) {
  for (const ConfigSection* s : plan_.config.sections("volume"))
    if (scaleout::IfsOptions::is_scaleout(*s)) {
      edge_ = std::make_shared<IfsEdgeResolver>(router_, scaleout::IfsOptions::from_config(*s).volume_id);
      break;
    }
}

std::shared_ptr<fs::VolumeResolver> FailoverClusterDeployment::resolver() {
  if (edge_) return edge_;
  return ClusterDeployment::resolver();
}

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
  no.compaction = o.compaction;  // [volume] compaction_* keys
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
  // A layout is answered only while the volume is served here under its lease: the same check
  // every call to the local volume passes (a FencedVolume behind the router's served_here()).
  scaleout_->set_lease_check([router = router_.get(), id = o.volume_id] {
    fs::Volume* v = router->served_here().find(id);
    if (!v) return false;
    fs::OpContext ctx;
    fs::Attr attr;
    return v->getattr(ctx, v->root(), &attr) == fs::Status::Ok;
  });
  hosted_.set_scaleout_cluster(scaleout_.get());
  if (edge_) edge_->attach(scaleout_.get(), ids);
}

// The config is read again as the node read it at its start: its own file, then the cluster's.
// Only members appended at the end can join (a scale-out node id is the member's position),
// and only storage nodes: a primary would need an EVS and a place in the NVRAM ring, which a
// running ring cannot change (that is a rolling restart with the new config).
std::string FailoverClusterDeployment::join() {
  if (!plan_.cluster->n_node() || !plan_.config.section("node") ||
      !plan_.config.section("node")->has("cluster_config"))
    throw std::invalid_argument("join: this node does not read a cluster config ([node] cluster_config)");
  Config fresh = Config::load(plan_.config.origin());
  fresh.append(Config::load(fresh.resolve_path(fresh.section("node")->get("cluster_config"))));
  std::optional<ClusterOptions> now;
  try {
    now = ClusterOptions::from_config(fresh);
  } catch (const ConfigError& e) {
    throw std::invalid_argument(std::string("join: the cluster config: ") + e.what());
  }
  const std::vector<MemberOptions>& was = plan_.cluster->members;
  if (!now || now->members.size() < was.size())
    throw std::invalid_argument("join: the cluster config lost members; only appending new [member]s is supported");
  for (size_t i = 0; i < was.size(); i++) {
    const MemberOptions &a = was[i], &b = now->members[i];
    if (a.name != b.name || a.host != b.host || a.port != b.port || a.standby != b.standby ||
        a.storage != b.storage)
      throw std::invalid_argument("join: [member " + a.name + "] changed or moved in the cluster config; "
                                  "only appending new [member]s is supported");
  }
  std::ostringstream out;
  std::lock_guard lock(join_mu_);
  for (size_t i = was.size(); i < now->members.size(); i++) {
    const MemberOptions& m = now->members[i];
    if (!m.storage)
      throw std::invalid_argument("join: [member " + m.name + "] is not role = storage; a new primary "
                                  "needs the nodes restarted one after the other with the new config");
  }
  for (size_t i = was.size(); i < now->members.size(); i++) {
    const MemberOptions& m = now->members[i];
    const uint32_t id = static_cast<uint32_t>(i + 1);
    if (joined_.count(m.name)) {
      out << "member " << m.name << ": joined already (scale-out node " << id << ")\n";
      continue;
    }
    auto peer = make_peer_link(m.name, m.host, m.port);
    peer->start();
    admit_peer(m.name, m.host);
    if (scaleout_) scaleout_->add_node(id, peer.get());
    joined_[m.name] = peer;
    util::log("cluster").info("member " + m.name + " (" + m.host + ":" + std::to_string(m.port) +
                              ") joined" + (scaleout_ ? " as scale-out node " + std::to_string(id) : ""));
    out << "member " << m.name << ": joined" << (scaleout_ ? " as scale-out node " + std::to_string(id) : "")
        << " (interconnect " << m.host << ":" << m.port << ")\n";
  }
  if (out.str().empty()) out << "join: no new [member] in the cluster config\n";
  return out.str();
}

void FailoverClusterDeployment::open_volumes() {
  for (const PlannedVolume& v : plan_.volumes) router_->add_remote(v.id);
}

void FailoverClusterDeployment::start(const rpc::RpcServerOptions& options,
                                      const std::vector<std::shared_ptr<rpc::Service>>& programs) {
  // First of all: what a crashed run left on the interfaces goes, and what will be put there is
  // checked, before this node answers on any address (start-node.sh takes an answer on the
  // node's own address as "started").
  std::vector<PoolOptions> pools = pools_from_config(plan_.config, *plan_.cluster);
  start_interface_addresses(pools);
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
  if (!plan_.cluster->allowed_peers.empty()) w.mirror_server.address_allowed = peer_address_gate();
  w.volumes = &hosted_;
  w.router = router_.get();
  w.authority = make_lease_authority(*plan_.cluster);
  for (const auto& [name, peer] : peers_) w.peers[name] = peer;
  w.make_evs = [this, options, programs, self = plan_.node.name](const EvsOptions& e) {
    rpc::RpcServerOptions eo = options;
    eo.bind_address = e.listen;
    eo.ports = {e.nfs_port, e.mount_port};
    if (eo.ports[0] == eo.ports[1]) eo.ports.pop_back();
    // The pair form's own address registers with the portmapper, as a node's address does.
    return std::make_unique<VirtualServer>(e.name, eo, programs, e.is_node_address && e.node == self,
                                           hosted_address(e.on_interface ? &*e.on_interface : nullptr));
  };
  w.locks = lock_hooks_;
  w.serving_log = serving_log_.get();
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
        [this, options, programs](const std::string& name, const std::string& address, uint16_t nfs,
                                  uint16_t mount, const address::InterfaceAddress* on) {
          rpc::RpcServerOptions po = options;
          po.bind_address = address;
          po.ports = {nfs, mount};
          if (nfs == mount) po.ports.pop_back();
          return std::make_unique<VirtualServer>(name, po, programs, false, hosted_address(on));
        },
        [this] { return failover_->peers_alive(); }, std::chrono::milliseconds(f.heartbeat_ms),
        std::chrono::milliseconds(f.startup_grace_ms));
    pools_->start();
  }
}

void FailoverClusterDeployment::start_interface_addresses(const std::vector<PoolOptions>& pools) {
  std::vector<address::InterfaceAddress> all;
  for (const EvsOptions& e : plan_.cluster->evs)
    if (e.on_interface) all.push_back(*e.on_interface);
  for (const PoolOptions& p : pools) all.insert(all.end(), p.on_interface.begin(), p.on_interface.end());
  const std::string path = plan_.node.in_data_dir("interface-addresses");
  // Even without addresses on interfaces now: a run with them that crashed may have left some.
  if (all.empty() && !std::filesystem::exists(path)) return;
  address_record_ = std::make_shared<address::AddressRecord>(path);
  // Before anything is served: a crashed run's addresses go, whether served again later or not
  // (those served are probed, added and announced again by their VirtualServer).
  for (const std::string& line : address::remove_leftover_addresses(*address_record_))
    util::log("cluster").warn("interface addresses: " + line);
  address::check_interface_addresses(all);
}

std::unique_ptr<address::HostedAddress> FailoverClusterDeployment::hosted_address(
    const address::InterfaceAddress* on) const {
  if (!on) return nullptr;
  return std::make_unique<address::HostedAddress>(*on, address_record_);
}

void FailoverClusterDeployment::quiesce() {
  if (failover_) failover_->quiesce();
}

// Hands this node's volumes and EVSes over (clean close, leases released).
void FailoverClusterDeployment::stop() {
  if (pools_) pools_->stop();
  if (failover_) failover_->stop();
  if (node_server_) node_server_->release();
  stop_interconnect();
  {
    std::lock_guard lock(join_mu_);
    for (auto& [name, peer] : joined_) peer->stop();
  }
  if (scaleout_) scaleout_->stop();
}

std::string FailoverClusterDeployment::status() const {
  return "cluster " + plan_.cluster->name + ": failover cluster of " +
         std::to_string(plan_.cluster->members.size()) + " nodes (authority " +
         membership::authority_kind_name(plan_.cluster->authority.kind) + ")\n" + failover_->status() +
         (pools_ ? pools_->status() : std::string()) + scaleout_line() + peer_lines() + joined_lines();
}

std::string FailoverClusterDeployment::scaleout_line() const {
  if (!scaleout_) return {};
  const scaleout::IfsNode::DirectReadStats s = scaleout_->direct_read_stats();
  return "scale-out reads answered here from the units: " + std::to_string(s.direct) +
         " (forwarded instead " + std::to_string(s.fallbacks) + ", layouts asked again " +
         std::to_string(s.retried) + "; layouts served as coordinator " +
         std::to_string(s.layouts_served) + ")\n" + "scale-out drives here compacted " +
         std::to_string(scaleout_->local()->compactions()) + " times, " +
         std::to_string(scaleout_->local()->bytes_reclaimed()) + " bytes reclaimed\n";
}

std::optional<Deployment::DriveCompactions> FailoverClusterDeployment::drive_compactions() const {
  if (!scaleout_) return std::nullopt;
  return DriveCompactions{scaleout_->local()->compactions(), scaleout_->local()->bytes_reclaimed()};
}

std::string FailoverClusterDeployment::joined_lines() const {
  std::lock_guard lock(join_mu_);
  std::string out;
  for (const auto& [name, peer] : joined_)
    out += "joined " + name + " (storage): interconnect " + (peer->connected() ? "up" : "down") + "\n";
  return out;
}

std::string FailoverClusterDeployment::why_no_volume_create() const {
  return "volume create is not available in a failover cluster: every node must know every "
         "volume, so add its [volume], [export] and EVS entry to the cluster config and restart "
         "the nodes one after the other";
}

std::string FailoverClusterDeployment::move(const std::string& what,
                                            const std::vector<std::string>& args) {
  if (what == "cluster") return failover_->mirror_command(args);
  return what == "evs" ? failover_->evs_command(args) : failover_->volume_move_command(args);
}

std::string FailoverClusterDeployment::failover(bool back) {
  return back ? failover_->failback() : failover_->failover();
}

}  // namespace nasd::cluster
