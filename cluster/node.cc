#include "cluster/node.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "fs/lfs/lfs_volume.h"
#include "fs/lfs/options.h"
#include "nvram/journal.h"
#include "nvram/journal_options.h"
#include "nvram/journal_volume.h"
#include "server/admin/command_registry.h"
#include "server/admin/control_socket.h"
#include "server/admin/stats_command.h"
#include "server/nfs/exports/exports.h"
#include "server/nfs/handle/handle_codec.h"
#include "server/nfs/mount/mount_service.h"
#include "server/nfs/mount/mount_table.h"
#include "server/nfs/nfs3/nfs3_service.h"
#include "server/rpc/rpc_server.h"
#include "server/rpc/rpc_server_options.h"

namespace nasd::cluster {
namespace {

constexpr uint32_t kNfsProgram = 100003;
constexpr uint32_t kMountProgram = 100005;

void log_line(const std::string& text) { std::fprintf(stderr, "nasd: %s\n", text.c_str()); }

}  // namespace

Node::Node(Config config)
    : config_(std::move(config)), options_(NodeOptions::from_config(config_)) {
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
    journal_ = nvram::Journal::open(nvram::JournalOptions::from_config(config_));
  else
    log_line("NVRAM journal off ([nvram] mode = off): every stable operation is written through");
  volumes_ = std::make_shared<LocalVolumes>();
  open_volumes();
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
  for (const ConfigSection* s : sections) open_volume(*s, config_);
}

void Node::open_volume(const ConfigSection& section, const Config& config) {
  fs::lfs::LfsOptions opts = fs::lfs::LfsOptions::from_config(section, config, options_.data_dir);
  std::string err;
  std::shared_ptr<fs::lfs::LfsVolume> lfs = fs::lfs::LfsVolume::open_or_create(opts, &err);
  if (!lfs) throw std::runtime_error("volume " + section.name() + ": " + err);
  std::lock_guard lock(volumes_mu_);
  lfs_.push_back(lfs);
  if (!journal_) {
    volumes_->add(lfs);
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
  volumes_->add(journaled);
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
  exports_ = nfs::Exports::from_config(config_);
  auto& exports = exports_;
  auto handles = nfs::HandleCodec::from_key_file(options_.handle_key);
  auto mounts = std::make_shared<nfs::MountTable>(options_.in_data_dir("rmtab"));
  rpc_ = std::make_unique<rpc::RpcServer>(ro);
  rpc_->add_service(std::make_shared<nfs::Nfs3Service>(volumes_, exports, handles));
  rpc_->add_service(std::make_shared<nfs::MountService>(volumes_, exports, handles, mounts));
  rpc_->start();
  // nfs_port == mount_port leaves a single listener that serves both programs.
  const auto& ports = rpc_->bound_ports();
  rpc_->register_with_rpcbind(kNfsProgram, 3, ports.front());
  for (uint32_t v = 1; v <= 3; v++) rpc_->register_with_rpcbind(kMountProgram, v, ports.back());
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
  if (journal_) journal_->shutdown();
  journaled_.clear();
  for (auto& v : lfs_) v->close();
  lfs_.clear();
  volumes_.reset();
  journal_.reset();
  lock_.reset();
}

}  // namespace nasd::cluster
