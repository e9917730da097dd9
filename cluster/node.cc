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
#include "fs/lfs/lfs_volume.h"
#include "fs/lfs/options.h"
#include "nvram/journal.h"
#include "nvram/journal_options.h"
#include "nvram/journal_volume.h"
#include "server/admin/command_registry.h"
#include "server/admin/control_socket.h"
#include "server/admin/stats_command.h"
#include "server/nfs/exports/exports.h"
#include "server/nfs/nfs_programs.h"
#include "server/rpc/rpc_server.h"
#include "server/rpc/rpc_server_options.h"

namespace nasd::cluster {
namespace {

constexpr uint32_t kNfsProgram = 100003;
constexpr uint32_t kMountProgram = 100005;

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
  if (journal_enabled())
    journal_ = nvram::Journal::open(nvram::JournalOptions::from_config(config_, options_.data_dir));
  else
    log_line("NVRAM journal off ([nvram] mode = off): every stable operation is written through");
  if (cluster_) {
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
  } else {
    volumes_ = std::make_shared<LocalVolumes>();
    resolver_ = volumes_;
  }
  open_volumes();
  namespace_root_ = std::make_shared<NamespaceRoot>(resolver_.get());
  for (const ConfigSection* v : config_.sections("volume"))
    namespace_root_->add_entry(v->name(), static_cast<uint32_t>(v->get_int("id", 0)));
  serve_local(namespace_root_);
  start_interconnect();
  start_rpc();
  start_admin();
  started_ = true;
}

// Each volume is recovered in two steps before it is served: the LFS rolls forward from its
// last checkpoint to the last complete log unit, then the journal replays every record that
// the LFS had not yet absorbed. Only then do clients see it.
void Node::open_volumes() {
  auto sections = config_.sections("volume");
  if (sections.empty()) throw ConfigError(config_.origin() + ": no [volume NAME] section");
  for (const ConfigSection* s : sections) {
    const PeerOptions* owner = cluster_ ? cluster_->owner_of(s->name()) : nullptr;
    if (!owner) {
      open_volume(*s, config_);
      continue;
    }
    // Owned by a peer: requests for it are forwarded; its root is learned from the owner.
    auto id = static_cast<uint32_t>(s->get_int("id", 0));
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
  interconnect_->start();
  for (auto& [name, peer] : peers_) peer->start();
  log_line("cluster " + cluster_->name + ": interconnect on " + cluster_->host + ":" +
           std::to_string(interconnect_->port()) + ", " + std::to_string(peers_.size()) + " peer(s)");
}

void Node::open_volume(const ConfigSection& section, const Config& config) {
  fs::lfs::LfsOptions opts = fs::lfs::LfsOptions::from_config(section, config, options_.data_dir);
  std::string err;
  std::shared_ptr<fs::lfs::LfsVolume> lfs = fs::lfs::LfsVolume::open_or_create(opts, &err);
  if (!lfs) throw std::runtime_error("volume " + section.name() + ": " + err);
  std::lock_guard lock(volumes_mu_);
  lfs_.push_back(lfs);
  if (!journal_) {
    serve_local(lfs);
    return;
  }
  auto journaled = std::make_shared<nvram::JournalVolume>(journal_, lfs);
  nvram::ReplayReport r = journaled->recover();
  std::ostringstream msg;
  msg << "volume " << section.name() << " (id " << lfs->id() << "): recovered to journal seq "
      << r.durable_seq_before << ", replayed " << r.applied << " of " << r.records
      << " NVRAM records (" << r.skipped << " already on disk, " << r.failed << " failed)";
  log_line(msg.str());
  journaled_.push_back(journaled);
  serve_local(journaled);
}

// `[nvram] mode = off` runs the node as an appliance whose NVRAM failed: the volumes sync every
// stable operation themselves. Kept for benchmarks that measure what the journal buys.
bool Node::journal_enabled() const {
  const ConfigSection* s = config_.section("nvram");
  return !(s && s->get("mode") == "off");
}

void Node::start_rpc() {
  const ConfigSection* node = config_.section("node");
  rpc::RpcServerOptions ro = rpc::rpc_server_options_from_config(*node);
  ro.log = log_line;
  nfs::NfsPrograms programs =
      nfs::make_nfs_programs(config_, resolver_, options_.data_dir, options_.handle_key);
  exports_ = programs.exports;
  export_namespace_root();
  rpc_ = std::make_unique<rpc::RpcServer>(ro);
  rpc_->add_service(programs.nfs);
  rpc_->add_service(programs.mount);
  rpc_->start();
  // nfs_port == mount_port leaves a single listener that serves both programs.
  const auto& ports = rpc_->bound_ports();
  rpc_->register_with_rpcbind(kNfsProgram, 3, ports.front());
  for (uint32_t v = 1; v <= 3; v++) rpc_->register_with_rpcbind(kMountProgram, v, ports.back());
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
  admin::add_stats_command(*commands_, rpc_->stats());
  commands_->add_command("nvram", "NVRAM journal fill level, commits, flushes, mirror state",
                         [this](const std::vector<std::string>&) {
                           return journal_ ? journal_->status() : std::string("nvram: off\n");
                         });
  commands_->add_command("volumes", "volumes of this node: id, name, backing, space, cleaner",
                         [this](const std::vector<std::string>&) { return volumes_status(); });
  commands_->add_command("volume",
                         "volume create NAME SIZE [--id N] [--clients LIST] [--access rw|ro] "
                         "[--squash root|all|none]: a new volume, served at once as /r/NAME",
                         [this](const std::vector<std::string>& args) { return volume_command(args); });
  control_ = std::make_unique<admin::ControlSocket>(options_.admin_socket, *commands_);
  control_->start();
}

std::string Node::volumes_status() const {
  std::lock_guard lock(volumes_mu_);
  std::ostringstream out;
  for (const auto& v : lfs_) out << v->status_text() << "\n";
  return out.str();
}

void Node::stop() {
  if (!started_) return;
  started_ = false;
  if (control_) control_->stop();
  if (rpc_) rpc_->stop();
  // Peers' forwarded calls stop before the volumes they run on close.
  if (interconnect_) interconnect_->stop();
  for (auto& [name, peer] : peers_) peer->stop();
  if (journal_) journal_->shutdown();
  journaled_.clear();
  for (auto& v : lfs_) v->close();
  lfs_.clear();
  volumes_.reset();
  namespace_root_.reset();
  interconnect_.reset();
  volume_server_.reset();
  router_.reset();
  resolver_.reset();
  peers_.clear();
  journal_.reset();
  lock_.reset();
}

}  // namespace nasd::cluster
