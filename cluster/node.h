// A nasd node: everything one process serves, wired in request-flow order from the bottom up:
// volumes (LFS) -> NVRAM journal (replayed before anything is served) -> name space -> NFS and
// MOUNT programs -> RPC transport (virtual servers), plus the admin control socket.
//
// The configuration is parsed once into a plan (node_plan.h); how the volumes are served is the
// deployment strategy of the plan's role (deployment.h): alone, a cluster with static
// ownership, or one node of an HA pair.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cluster/data_dir_lock.h"
#include "cluster/deployment.h"
#include "cluster/hosted_volumes.h"
#include "server/rpc/duplicate_request_cache.h"
#include "cluster/namespace_root.h"
#include "cluster/node_plan.h"
#include "cluster/volume_lock_files.h"
#include "util/config.h"

namespace nasd::nvram {
class Journal;
}
namespace nasd::rpc {
class CallStats;
}
namespace nasd::nfs {
class Exports;
struct NfsPrograms;
struct ExportPolicy;
}
namespace nasd::nlm {
class LockState;
}
namespace nasd::admin {
class CommandRegistry;
class ControlSocket;
}
namespace nasd::http {
class JsonWriter;
class ManagementServer;
class MetricFamilies;
}

namespace nasd::cluster {

class NlmForwarding;

class Node {
 public:
  // Parses the configuration (throws ConfigError naming what is wrong); starts nothing.
  explicit Node(Config config);
  ~Node();  // stop()
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // Opens (creating on first start) the journal and volumes, replays the journal, then starts
  // serving. Throws with a message that names what failed; nothing keeps running after a throw.
  void start();
  // Clean stop: no new requests, running ones finish, the journal drains into the volumes and
  // each volume writes a checkpoint. Idempotent.
  void stop();

  const NodeOptions& options() const { return plan_.node; }
  const NodePlan& plan() const { return plan_; }

  // Re-reads the [export] sections of the config file (and of <data_dir>/volumes.conf) and
  // puts them in force for every call that starts afterwards, from new and already-mounted
  // clients alike. A file with any error is refused whole: the old exports stay in force and
  // std::invalid_argument says which line and why. Returns the exports now in force.
  // `nasd-admin exports reload` and SIGHUP run it (node_admin_exports.cc).
  std::string reload_exports();

 private:
  void load_cluster_key();
  void open_journal();
  std::shared_ptr<fs::RecoveredCallSink> make_reply_cache();
  // `volume create NAME SIZE [--id N] [--clients LIST] [--access rw|ro] [--squash MODE]`
  // (node_admin_volumes.cc): a new volume served at once, exported as /r/NAME, and recorded in
  // <data_dir>/volumes.conf so that every later start serves it too.
  std::string volume_command(const std::vector<std::string>& args);
  std::string create_volume(const std::vector<std::string>& args);
  // The NFS and MOUNT programs, served by the deployment's virtual server(s).
  void start_rpc();
  // Exports /r (read-only, to the clients of the first export) unless the config exports it.
  void export_namespace_root();
  static std::vector<nfs::ExportPolicy> with_namespace_root(std::vector<nfs::ExportPolicy> exports);
  // `exports [list|reload]` (node_admin_exports.cc).
  std::string exports_command(const std::vector<std::string>& args);
  void start_admin();
  // NLM and NSM (node_locks.cc): the lock state and its two programs, the failover hooks that
  // hand a volume's lock table over with it (or begin its grace period after a takeover), and
  // `nasd-admin locks`.
  std::vector<std::shared_ptr<rpc::Service>> make_lock_services(const nfs::NfsPrograms& programs);
  bool serves_volume_here(uint32_t volume_id) const;
  VolumeLockHooks lock_hooks();
  void lock_volume_opened(uint32_t id);
  void lock_volume_serving(uint32_t id, const std::string& address);
  void lock_volume_closing(uint32_t id, bool handover);
  std::string locks_status() const;
  // The metrics and management page listener ([node] http_port; node_http.cc): what it shows
  // of the volumes, NVRAM, cluster and exports.
  void start_http();
  void write_status_json(http::JsonWriter& out) const;
  http::MetricFamilies metric_families() const;
  std::string volume_name(uint32_t id) const;
  const char* cluster_mode() const;
  std::string cluster_status() const;

  NodePlan plan_;
  std::unique_ptr<DataDirLock> lock_;
  std::shared_ptr<nvram::Journal> journal_;
  std::unique_ptr<HostedVolumes> hosted_;
  // The node's one duplicate request cache (all its virtual servers), which the volumes'
  // recovery fills from the journal before the first call is served.
  std::shared_ptr<rpc::DuplicateRequestCache> drc_;
  std::unique_ptr<Deployment> deployment_;
  std::shared_ptr<nfs::Exports> exports_;
  std::shared_ptr<NamespaceRoot> namespace_root_;  // /r: one entry per volume, on every node
  std::mutex admin_mu_;                            // one volume creation at a time
  std::shared_ptr<rpc::CallStats> stats_;          // of every virtual server of this node
  std::shared_ptr<nlm::LockState> locks_;          // NLM/NSM: locks, monitored clients
  std::shared_ptr<VolumeLockFiles> lock_files_;     // each volume's clients and handed-over table
  std::shared_ptr<NlmForwarding> lock_forwarding_;  // NLM calls to and from other nodes (a cluster)
  std::mutex recovering_mu_;
  std::set<uint32_t> recovering_;  // opened without their table: clients told once serving
  std::unique_ptr<admin::CommandRegistry> commands_;
  std::unique_ptr<admin::ControlSocket> control_;
  std::unique_ptr<http::ManagementServer> http_;  // reads everything above: stopped first
  bool started_ = false;
};

}  // namespace nasd::cluster
