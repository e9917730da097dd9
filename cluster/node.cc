#include "cluster/node.h"
#include "cluster/nlm_forwarding.h"

#include <sys/stat.h>

#include <sstream>
#include <stdexcept>

#include "nvram/journal.h"
#include "server/admin/command_registry.h"
#include "server/admin/control_socket.h"
#include "server/admin/stats_command.h"
#include "server/http/management_server.h"
#include "server/nfs/exports/exports.h"
#include "server/nfs/nfs3/recovered_replies.h"
#include "server/nfs/nfs_programs.h"
#include "server/nlm/lock_state.h"
#include "server/rpc/call_stats.h"
#include "server/rpc/connection_limiter.h"
#include "server/rpc/rpc_server_options.h"
#include "util/log.h"
#include "util/secret_key.h"

namespace nasd::cluster {

Node::Node(Config config) : plan_(NodePlan::from_config(std::move(config))) {}

Node::~Node() { stop(); }

void Node::start() {
  if (started_) throw std::logic_error("node started twice");
  lock_ = std::make_unique<DataDirLock>(plan_.node.data_dir);
  if (plan_.cluster) load_cluster_key();
  open_journal();
  hosted_ = std::make_unique<HostedVolumes>(journal_, make_reply_cache());
  deployment_ = make_deployment(plan_, *hosted_);
  // Each volume is recovered in two steps before it is served (HostedVolumes): the LFS rolls
  // forward from its last checkpoint, then the journal replays what the LFS had not absorbed.
  deployment_->open_volumes();
  namespace_root_ = std::make_shared<NamespaceRoot>(deployment_->resolver().get());
  for (const PlannedVolume& v : plan_.volumes) namespace_root_->add_entry(v.name, v.id);
  deployment_->serve_local(namespace_root_);
  start_rpc();
  start_admin();
  start_http();
  started_ = true;
}

// The key every cluster link proves (util/link_handshake.h), shared by the nodes like the
// handle key: deploy/start-cluster.sh makes one file and gives it to both.
void Node::load_cluster_key() {
  const std::string path = plan_.cluster->key_file.empty() ? plan_.node.in_data_dir("cluster.key")
                                                           : plan_.cluster->key_file;
  plan_.link = {load_or_create_secret_key(path, "cluster key"), plan_.node.name};
  // Values in etcd (leases, placement) carry a tag under the same key (etcd_value_seal.h).
  plan_.cluster->authority.etcd.value_key = plan_.link.key;
  try {
    plan_.link.check();
  } catch (const std::invalid_argument& e) {
    throw ConfigError(std::string("[cluster] ") + e.what());
  }
}

// The reply cache moves with the data: every volume's recovery (start, takeover, hand-over)
// puts the replies its journal recorded into the node's cache (nfs::RecoveredReplies).
std::shared_ptr<fs::RecoveredCallSink> Node::make_reply_cache() {
  const rpc::RpcServerOptions ro =
      rpc::rpc_server_options_from_config(*plan_.config.section("node"));
  if (!ro.duplicate_request_cache) return nullptr;
  drc_ = std::make_shared<rpc::DuplicateRequestCache>(ro.drc);
  return std::make_shared<nfs::RecoveredReplies>(
      nfs::HandleCodec::from_key_file(plan_.node.handle_key), drc_);
}

// `[nvram] mode = off` runs the node as an appliance whose NVRAM failed: the volumes sync every
// stable operation themselves. Kept for benchmarks that measure what the journal buys.
void Node::open_journal() {
  if (!plan_.journal.enabled) {
    util::log("cluster").warn("NVRAM journal off ([nvram] mode = off): every stable operation is written through");
    return;
  }
  nvram::JournalOptions jo = plan_.journal;
  // In a failover cluster every record reaches the copy at the member that covers this node,
  // over a link that proves the key and leaves from this node's own address (as the
  // interconnect), before it is acknowledged.
  if (plan_.role == NodeRole::FailoverCluster && !jo.mirror.empty()) {
    const MemberOptions* self = plan_.cluster->member(plan_.node.name);
    if (jo.mirror == self->mirror_target) {
      jo.mirror_credentials = plan_.link;
      jo.mirror_peer = self->mirror_to;
      jo.mirror_source = plan_.cluster->host;
    }
  }
  journal_ = nvram::Journal::open(jo);
}

void Node::start_rpc() {
  rpc::RpcServerOptions ro = rpc::rpc_server_options_from_config(*plan_.config.section("node"));
  ro.shared_drc = drc_;
  stats_ = std::make_shared<rpc::CallStats>();
  ro.stats = stats_;
  // One set of connection caps for the node, whichever of its addresses a client uses.
  ro.connections = std::make_shared<rpc::ConnectionLimiter>(ro.tcp.max_connections,
                                                            ro.tcp.max_connections_per_address);
  nfs::NfsPrograms programs = nfs::make_nfs_programs(plan_.config, deployment_->resolver(),
                                                     plan_.node.data_dir, plan_.node.handle_key);
  exports_ = programs.exports;
  export_namespace_root();
  std::vector<std::shared_ptr<rpc::Service>> services = {programs.nfs, programs.mount};
  for (auto& lock_service : make_lock_services(programs)) services.push_back(lock_service);
  deployment_->set_volume_lock_hooks(lock_hooks());
  deployment_->start(ro, services);
}

void Node::export_namespace_root() {
  auto all = exports_->all();
  if (!all.empty()) exports_->replace(with_namespace_root(std::move(all)));
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
                         "[--squash root|all|none]: a new volume, served at once as /r/NAME; "
                         "volume move VOLUME EVS [--wait S|--no-wait], volume cancel-move VOLUME: "
                         "a planned online move of a volume to another virtual server",
                         [this](const std::vector<std::string>& args) { return volume_command(args); });
  commands_->add_command("locks", "NLM locks held and waiting, share reservations, grace",
                         [this](const std::vector<std::string>&) { return locks_status(); });
  commands_->add_command("snapshot",
                         "snapshot create|delete VOLUME NAME, snapshot list [VOLUME]: read-only "
                         "point-in-time copies, seen by clients under .snapshot",
                         [this](const std::vector<std::string>& args) { return hosted_->snapshot_command(args); });
  commands_->add_command("exports",
                         "exports [list|reload]: the exports in force; reload re-reads them from "
                         "the config (as SIGHUP does) and applies them to every client at once",
                         [this](const std::vector<std::string>& args) { return exports_command(args); });
  commands_->add_command("cluster",
                         "cluster: nodes, volumes, owners, leases, addresses, NVRAM mirror state "
                         "and stale-mirror marks | cluster accept-mirror-loss NODE "
                         "--yes-lose-unmirrored-writes: let NODE's volumes be taken over from a "
                         "mirror marked stale, losing the writes it lacks",
                         [this](const std::vector<std::string>& args) {
                           if (args.empty()) return cluster_status();
                           return deployment_->move("cluster", args);
                         });
  commands_->add_command("evs",
                         "evs [list] | evs move EVS NODE [--wait SECONDS | --no-wait] | evs cancel "
                         "EVS: where each virtual server is designated, and planned online moves "
                         "of one to another node",
                         [this](const std::vector<std::string>& args) {
                           std::vector<std::string> all = {"evs"};
                           all.insert(all.end(), args.begin(), args.end());
                           return deployment_->move("evs", all);
                         });
  commands_->add_command("join",
                         "join: re-read the cluster config and take in the role = storage "
                         "[member]s appended to it (their drives join the scale-out volume, "
                         "whose rebalance job then moves units onto them); run on every node",
                         [this](const std::vector<std::string>& args) {
                           if (!args.empty()) throw std::invalid_argument("usage: join");
                           return deployment_->join();
                         });
  commands_->add_command("protection",
                         "protection [VOLUME] | protection scrub VOLUME | protection catalog "
                         "VOLUME | protection set VOLUME PATH POLICY | protection clear VOLUME "
                         "PATH | protection get VOLUME PATH: each protection group's health "
                         "(full/degraded/lost units), "
                         "units per node and the re-protect, rebalance and scrub jobs' progress "
                         "of the scale-out volumes this node coordinates; scrub starts a scrub "
                         "job (every unit read and checked, bad ones repaired from parity); "
                         "catalog prints the group catalog for nasd-fsck --scaleout; set/clear "
                         "a directory's policy (OneFS isi set -p: +3d:1n, +2n, 6+2/2; files "
                         "below inherit it, existing ones are restriped in the background), "
                         "get shows the effective policy and where it comes from",
                         [this](const std::vector<std::string>& args) { return hosted_->protection_command(args); });
  commands_->add_command("failover",
                         "planned failover: hand this node's volumes and address to its partner",
                         [this](const std::vector<std::string>&) { return deployment_->failover(false); });
  commands_->add_command("failback", "take this node's volumes and address back from its partner",
                         [this](const std::vector<std::string>&) { return deployment_->failover(true); });
  control_ = std::make_unique<admin::ControlSocket>(plan_.node.admin_socket, *commands_);
  control_->start();
}

std::string Node::cluster_status() const {
  std::ostringstream out;
  out << deployment_->status();
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
  deployment_->quiesce();
  http_.reset();
  if (control_) control_->stop();
  // An HA node hands its volumes and address to the partner; peers' forwarded calls stop
  // before the volumes they run on close.
  deployment_->stop();
  if (lock_forwarding_) lock_forwarding_->stop();  // after the interconnect: no call runs now
  if (locks_) locks_->stop();  // no more callbacks to clients
  hosted_->close_all();
  if (journal_) journal_->shutdown();
  namespace_root_.reset();
  deployment_.reset();
  hosted_.reset();
  locks_.reset();
  journal_.reset();
  lock_.reset();
}

}  // namespace nasd::cluster
