// A nasd node: everything one process serves, wired in request-flow order from the bottom up:
// volumes (LFS) -> NVRAM journal (replayed before anything is served) -> name space -> NFS and
// MOUNT programs -> RPC transport (virtual servers), plus the admin control socket.
//
// Three ways to run: alone (every volume local); clustered with static ownership (a peer's
// volumes are forwarded to it); or as one node of an HA pair ([cluster] shared_dir), where the
// membership layer (Failover) decides which node serves which volume and address.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/cluster_options.h"
#include "cluster/data_dir_lock.h"
#include "cluster/failover.h"
#include "cluster/hosted_volumes.h"
#include "server/rpc/duplicate_request_cache.h"
#include "cluster/local_volumes.h"
#include "cluster/namespace_root.h"
#include "cluster/node_options.h"
#include "cluster/virtual_server.h"
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
}
namespace nasd::interconnect {
class ClusterRouter;
class InterconnectServer;
class PeerClient;
class VolumeServer;
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

class Node {
 public:
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

  const NodeOptions& options() const { return options_; }

 private:
  bool journal_enabled() const;
  void open_journal();
  // Static ownership: opens every volume this node owns; a peer's are forwarded to it.
  void open_volumes();
  std::shared_ptr<fs::RecoveredCallSink> make_reply_cache();
  // `volume create NAME SIZE [--id N] [--clients LIST] [--access rw|ro] [--squash MODE]`
  // (node_admin_volumes.cc): a new volume served at once, exported as /r/NAME, and recorded in
  // <data_dir>/volumes.conf so that every later start serves it too.
  std::string volume_command(const std::vector<std::string>& args);
  std::string create_volume(const std::vector<std::string>& args);
  std::string admin_volumes_file() const { return options_.in_data_dir("volumes.conf"); }
  // Serves `volume` from this node: in the router when clustered, else in LocalVolumes.
  void serve_local(std::shared_ptr<fs::Volume> volume);
  // Clustered: the interconnect listener that executes peers' forwarded calls on the volumes
  // this node owns, and a link to every peer for the volumes it owns.
  void make_router();
  void start_interconnect();
  // The NFS and MOUNT programs, and the virtual server(s) that carry them.
  void start_rpc();
  // Exports /r (read-only, to the clients of the first export) unless the config exports it.
  void export_namespace_root();
  void start_admin();
  // NLM and NSM (node_locks.cc): the lock state and its two programs, the failover hooks that
  // start a volume's grace period, and `nasd-admin locks`.
  std::vector<std::shared_ptr<rpc::Service>> make_lock_services(const nfs::NfsPrograms& programs);
  bool serves_volume_here(uint32_t volume_id) const;
  void lock_volume_opened(uint32_t id, bool home);
  std::string locks_status() const;
  // The metrics and management page listener ([node] http_port; node_http.cc): what it shows
  // of the volumes, NVRAM, cluster and exports.
  void start_http();
  void write_status_json(http::JsonWriter& out) const;
  http::MetricFamilies metric_families() const;
  std::string volume_name(uint32_t id) const;
  const char* cluster_mode() const;
  std::string cluster_status() const;
  std::string failover_command(bool back);

  Config config_;
  NodeOptions options_;
  std::unique_ptr<DataDirLock> lock_;
  std::shared_ptr<nvram::Journal> journal_;
  std::unique_ptr<HostedVolumes> hosted_;
  // The node's one duplicate request cache (all its virtual servers), which the volumes'
  // recovery fills from the journal before the first call is served.
  std::shared_ptr<rpc::DuplicateRequestCache> drc_;
  std::optional<ClusterOptions> cluster_;
  std::shared_ptr<fs::VolumeResolver> resolver_;  // what the NFS and MOUNT programs ask
  std::shared_ptr<LocalVolumes> volumes_;                 // alone
  std::shared_ptr<interconnect::ClusterRouter> router_;   // clustered
  std::map<std::string, std::shared_ptr<interconnect::PeerClient>> peers_;
  std::unique_ptr<interconnect::VolumeServer> volume_server_;
  std::unique_ptr<interconnect::InterconnectServer> interconnect_;
  std::shared_ptr<nfs::Exports> exports_;
  std::shared_ptr<NamespaceRoot> namespace_root_;  // /r: one entry per volume, on every node
  std::mutex admin_mu_;            // one volume creation at a time
  std::shared_ptr<rpc::CallStats> stats_;          // of every virtual server of this node
  std::unique_ptr<VirtualServer> home_server_;     // without failover: bound while running
  std::unique_ptr<Failover> failover_;             // an HA pair ([cluster] shared_dir)
  std::shared_ptr<nlm::LockState> locks_;          // NLM/NSM: locks, monitored clients
  std::unique_ptr<admin::CommandRegistry> commands_;
  std::unique_ptr<admin::ControlSocket> control_;
  std::unique_ptr<http::ManagementServer> http_;  // reads everything above: stopped first
  bool started_ = false;
};

}  // namespace nasd::cluster
