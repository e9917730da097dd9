#include "cluster/node.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "cluster/interconnect/interconnect_server.h"
#include "cluster/interconnect/peer_client.h"
#include "cluster/interconnect/router.h"
#include "cluster/interconnect/volume_server.h"
#include "nvram/journal.h"
#include "nvram/journal_options.h"
#include "server/admin/command_registry.h"
#include "server/admin/control_socket.h"
#include "server/admin/stats_command.h"
#include "server/http/management_server.h"
#include "server/nfs/exports/exports.h"
#include "server/nfs/nfs3/recovered_replies.h"
#include "server/nfs/nfs_programs.h"
#include "server/nlm/lock_state.h"
#include "server/rpc/call_stats.h"
#include "server/rpc/rpc_server_options.h"

namespace nasd::cluster {
namespace {

void log_line(const std::string& text) { std::fprintf(stderr, "nasd: %s\n", text.c_str()); }

}  // namespace

Node::Node(Config config)
    : config_(std::move(config)),
      options_(NodeOptions::from_config(config_)),
      cluster_(ClusterOptions::from_config(config_)) {
  // Volumes and exports the admin created at run time live beside the node's other state.
  if (std::filesystem::exists(admin_volumes_file()))
    config_.append(Config::load(admin_volumes_file()));
}

Node::~Node() { stop(); }

void Node::start() {
  if (started_) throw std::logic_error("node started twice");
  lock_ = std::make_unique<DataDirLock>(options_.data_dir);
  umask(022);
  open_journal();
  hosted_ = std::make_unique<HostedVolumes>(journal_, log_line, make_reply_cache());
  if (cluster_) {
    make_router();
  } else {
    volumes_ = std::make_shared<LocalVolumes>();
    resolver_ = volumes_;
  }
  open_volumes();
  namespace_root_ = std::make_shared<NamespaceRoot>(resolver_.get());
  for (const ConfigSection* v : config_.sections("volume"))
    namespace_root_->add_entry(v->name(), static_cast<uint32_t>(v->get_int("id", 0)));
  serve_local(namespace_root_);
  start_rpc();
  start_interconnect();
  start_admin();
  start_http();
  started_ = true;
}

// The reply cache moves with the data: every volume's recovery (start, takeover, hand-over)
// puts the replies its journal recorded into the node's cache (nfs::RecoveredReplies).
std::shared_ptr<fs::RecoveredCallSink> Node::make_reply_cache() {
  const rpc::RpcServerOptions ro = rpc::rpc_server_options_from_config(*config_.section("node"));
  if (!ro.duplicate_request_cache) return nullptr;
  drc_ = std::make_shared<rpc::DuplicateRequestCache>(ro.drc);
  return std::make_shared<nfs::RecoveredReplies>(
      nfs::HandleCodec::from_key_file(options_.handle_key), drc_);
}

void Node::open_journal() {
  if (!journal_enabled()) {
    log_line("NVRAM journal off ([nvram] mode = off): every stable operation is written through");
    return;
  }
  nvram::JournalOptions jo = nvram::JournalOptions::from_config(config_, options_.data_dir);
  // In an HA pair every record reaches the partner's copy before it is acknowledged.
  if (cluster_ && cluster_->failover && jo.mirror.empty()) jo.mirror = cluster_->partner().mirror;
  journal_ = nvram::Journal::open(jo);
}

// `[nvram] mode = off` runs the node as an appliance whose NVRAM failed: the volumes sync every
// stable operation themselves. Kept for benchmarks that measure what the journal buys.
bool Node::journal_enabled() const {
  const ConfigSection* s = config_.section("nvram");
  return !(s && s->get("mode") == "off");
}

void Node::make_router() {
  router_ = std::make_shared<interconnect::ClusterRouter>(
      options_.name, [this](const std::string& node) -> std::shared_ptr<interconnect::CallChannel> {
        auto it = peers_.find(node);
        return it == peers_.end() ? nullptr : it->second;
      });
  resolver_ = router_;
  for (const auto& p : cluster_->peers) {
    interconnect::PeerClientOptions po;
    po.host = p.host;
    po.port = p.port;
    po.cluster_name = cluster_->name;
    po.local_node = options_.name;
    po.expected_peer = p.name;
    peers_[p.name] = std::make_shared<interconnect::PeerClient>(po);
  }
}

// Each volume is recovered in two steps before it is served (HostedVolumes): the LFS rolls
// forward from its last checkpoint, then the journal replays what the LFS had not absorbed.
void Node::open_volumes() {
  auto sections = config_.sections("volume");
  if (sections.empty()) throw ConfigError(config_.origin() + ": no [volume NAME] section");
  for (const ConfigSection* s : sections) {
    auto id = static_cast<uint32_t>(s->get_int("id", 0));
    if (cluster_ && cluster_->failover) {
      // Nobody's until the membership grants a lease: requests meanwhile go to the partner,
      // which answers NFS3ERR_JUKEBOX for what it does not serve either.
      router_->add_remote(id);
      router_->set_owner(id, cluster_->partner().name);
      continue;
    }
    const PeerOptions* owner = cluster_ ? cluster_->owner_of(s->name()) : nullptr;
    if (!owner) {
      serve_local(hosted_->open(*s, config_, options_.data_dir));
      continue;
    }
    // Owned by a peer: requests for it are forwarded; its root is learned from the owner.
    router_->add_remote(id);
    router_->set_owner(id, owner->name);
    log_line("volume " + s->name() + " (id " + std::to_string(id) + "): owned by " + owner->name +
             ", forwarded over the interconnect");
  }
}

void Node::serve_local(std::shared_ptr<fs::Volume> volume) {
  if (!router_) {
    volumes_->add(std::move(volume));
    return;
  }
  uint32_t id = volume->id();
  router_->add_local(std::move(volume));
  router_->set_owner(id, options_.name);
}

void Node::start_interconnect() {
  if (!cluster_) return;
  interconnect::InterconnectServerOptions io;
  io.host = cluster_->host;
  io.port = cluster_->port;
  io.cluster_name = cluster_->name;
  io.local_node = options_.name;
  interconnect_ = std::make_unique<interconnect::InterconnectServer>(io);
  volume_server_ = std::make_unique<interconnect::VolumeServer>(&router_->served_here());
  volume_server_->attach(*interconnect_);
  if (failover_) failover_->attach(*interconnect_);
  interconnect_->start();
  for (auto& [name, peer] : peers_) peer->start();
  log_line("cluster " + cluster_->name + ": interconnect on " + cluster_->host + ":" +
           std::to_string(interconnect_->port()) + ", " + std::to_string(peers_.size()) + " peer(s)");
  if (failover_) failover_->start();
}

void Node::start_rpc() {
  const ConfigSection* node = config_.section("node");
  rpc::RpcServerOptions ro = rpc::rpc_server_options_from_config(*node);
  ro.log = log_line;
  ro.shared_drc = drc_;
  stats_ = std::make_shared<rpc::CallStats>();
  ro.stats = stats_;
  nfs::NfsPrograms programs =
      nfs::make_nfs_programs(config_, resolver_, options_.data_dir, options_.handle_key);
  exports_ = programs.exports;
  export_namespace_root();
  std::vector<std::shared_ptr<rpc::Service>> services = {programs.nfs, programs.mount};
  for (auto& lock_service : make_lock_services(programs)) services.push_back(lock_service);
  auto home = std::make_unique<VirtualServer>(options_.name, ro, services, true);
  if (!cluster_ || !cluster_->failover) {
    home_server_ = std::move(home);
    if (!home_server_->bind())
      throw std::runtime_error("cannot serve NFS on " + home_server_->describe());
    return;
  }
  // An HA pair: each address is served by whichever node serves its volumes.
  const PeerOptions& partner = cluster_->partner();
  rpc::RpcServerOptions po = ro;
  po.bind_address = partner.vs_listen;
  po.ports = {partner.vs_nfs_port, partner.vs_mount_port};
  if (po.ports[0] == po.ports[1]) po.ports.pop_back();
  FailoverWiring w;
  w.self = options_.name;
  w.options = *cluster_->failover;
  w.partner = partner;
  w.config = &config_;
  w.data_dir = options_.data_dir;
  w.mirror_mode = journal_ ? journal_->options().mode : nvram::DurabilityMode::Process;
  w.volumes = hosted_.get();
  w.router = router_.get();
  w.partner_channel = peers_.at(partner.name);
  w.home_server = std::move(home);
  w.partner_server = std::make_unique<VirtualServer>(partner.name, po, services, false);
  w.log = log_line;
  w.volume_opened = [this](uint32_t id, bool home) { lock_volume_opened(id, home); };
  w.volume_closed = [this](uint32_t id) { locks_->drop_volume(id); };
  failover_ = std::make_unique<Failover>(std::move(w));
}

void Node::export_namespace_root() {
  auto all = exports_->all();
  if (all.empty()) return;
  for (const auto& e : all)
    if (e.path == "/r") return;
  nfs::ExportPolicy r = all.front();
  r.path = "/r";
  r.path_components = {"r"};
  r.volume_name = "r";
  r.volume_id = NamespaceRoot::kVolumeId;
  r.read_only = true;
  exports_->add(std::move(r));
}

void Node::start_admin() {
  commands_ = std::make_unique<admin::CommandRegistry>();
  admin::add_stats_command(*commands_, *stats_);
  commands_->add_command("nvram", "NVRAM journal fill level, commits, flushes, mirror state",
                         [this](const std::vector<std::string>&) {
                           return journal_ ? journal_->status() : std::string("nvram: off\n");
                         });
  commands_->add_command("volumes", "volumes open on this node: id, name, backing, space, cleaner",
                         [this](const std::vector<std::string>&) { return hosted_->status(); });
  commands_->add_command("volume",
                         "volume create NAME SIZE [--id N] [--clients LIST] [--access rw|ro] "
                         "[--squash root|all|none]: a new volume, served at once as /r/NAME",
                         [this](const std::vector<std::string>& args) { return volume_command(args); });
  commands_->add_command("locks", "NLM locks held and waiting, share reservations, grace",
                         [this](const std::vector<std::string>&) { return locks_status(); });
  commands_->add_command("snapshot",
                         "snapshot create|delete VOLUME NAME, snapshot list [VOLUME]: read-only "
                         "point-in-time copies, seen by clients under .snapshot",
                         [this](const std::vector<std::string>& args) { return hosted_->snapshot_command(args); });
  commands_->add_command("cluster", "nodes, volumes, owners, leases, addresses, NVRAM mirror state",
                         [this](const std::vector<std::string>&) { return cluster_status(); });
  commands_->add_command("failover",
                         "planned failover: hand this node's volumes and address to its partner",
                         [this](const std::vector<std::string>&) { return failover_command(false); });
  commands_->add_command("failback", "take this node's volumes and address back from its partner",
                         [this](const std::vector<std::string>&) { return failover_command(true); });
  control_ = std::make_unique<admin::ControlSocket>(options_.admin_socket, *commands_);
  control_->start();
}

std::string Node::failover_command(bool back) {
  if (!failover_)
    throw std::invalid_argument("this node is not one of an HA pair ([cluster] shared_dir)");
  return back ? failover_->failback() : failover_->failover();
}

std::string Node::cluster_status() const {
  std::ostringstream out;
  if (!cluster_) {
    out << "node " << options_.name << ": alone (no [cluster] section), every volume local\n";
  } else if (failover_) {
    out << "cluster " << cluster_->name << ": HA pair\n" << failover_->status();
  } else {
    out << "cluster " << cluster_->name << ", node " << options_.name
        << ": static ownership, no failover\n";
    for (uint32_t id : router_->volume_ids()) {
      auto owner = router_->owner(id);
      out << "volume id " << id << ": owned by "
          << (owner && *owner == options_.name ? "this node" : owner ? *owner : "nobody") << "\n";
    }
  }
  for (const auto& [name, peer] : peers_)
    out << "peer " << name << ": interconnect " << (peer->connected() ? "up" : "down") << "\n";
  if (!journal_) {
    out << "NVRAM: off\n";
  } else {
    nvram::JournalStats s = journal_->stats();
    out << "NVRAM mirror: ";
    if (!s.mirror_configured)
      out << "none";
    else if (s.degraded)
      out << "DEGRADED (partner unreachable): stable writes are acknowledged from local NVRAM only";
    else
      out << (s.mirror_connected ? "connected" : "connecting") << ", lag " << s.mirror_lag_bytes
          << " bytes";
    out << "\n";
  }
  return out.str();
}

void Node::stop() {
  if (!started_) return;
  started_ = false;
  http_.reset();
  if (control_) control_->stop();
  // An HA node hands its volumes and address to the partner (clean close, leases released).
  if (failover_) failover_->stop();
  if (home_server_) home_server_->release();
  if (locks_) locks_->stop();  // no more callbacks to clients
  // Peers' forwarded calls stop before the volumes they run on close.
  if (interconnect_) interconnect_->stop();
  for (auto& [name, peer] : peers_) peer->stop();
  hosted_->close_all();
  if (journal_) journal_->shutdown();
  failover_.reset();
  home_server_.reset();
  volumes_.reset();
  namespace_root_.reset();
  interconnect_.reset();
  volume_server_.reset();
  router_.reset();
  resolver_.reset();
  peers_.clear();
  hosted_.reset();
  locks_.reset();
  journal_.reset();
  lock_.reset();
}

}  // namespace nasd::cluster
