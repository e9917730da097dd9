// How a node serves its volumes: one small strategy per NodeRole of its plan (node_plan.h).
//   alone           StandaloneDeployment: every volume local, the node's address bound at start.
//   static cluster  ClusterDeployment: the router serves local volumes here and forwards a
//                   peer's to it; the interconnect listener and a link to every peer.
//   failover        FailoverClusterDeployment (2 to 8 nodes; the HA pair is a ring of two):
//                   the cluster wiring, but no volume is opened at start: the membership
//                   (ClusterFailover) opens, serves and hands over volumes and EVS addresses.
// The node does what is common (journal, hosted volumes, NFS and MOUNT programs, /r, admin)
// and asks its deployment for the rest. Calls come from the node's start/stop thread and the
// admin thread (serve_local, status), never concurrently with start() or stop().
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cluster/cluster_failover.h"
#include "cluster/interconnect/call_channel.h"
#include "cluster/interconnect/interconnect_server.h"
#include "cluster/hosted_volumes.h"
#include "cluster/node_plan.h"
#include "fs/volume.h"
#include "server/rpc/rpc_server.h"
#include "server/rpc/service.h"

namespace nasd::interconnect {
class ClusterRouter;
}

namespace nasd::cluster {

class Deployment {
 public:
  virtual ~Deployment() = default;

  // What the NFS and MOUNT programs ask for a volume.
  virtual std::shared_ptr<fs::VolumeResolver> resolver() = 0;
  // Opens or declares every planned volume; before start().
  virtual void open_volumes() = 0;
  // Serves a volume opened on this node (the /r root, an admin-created volume).
  virtual void serve_local(std::shared_ptr<fs::Volume> volume) = 0;
  // Serves the NFS and MOUNT programs on the node's address(es) with `options`, and starts
  // whatever links the role needs. Throws naming what failed.
  virtual void start(const rpc::RpcServerOptions& options,
                     const std::vector<std::shared_ptr<rpc::Service>>& programs) = 0;
  // The node begins to stop (first of all, before its admin and page go): a failover cluster
  // takes no volume over from now on. The rest goes on until stop().
  virtual void quiesce() {}
  // No new requests from outside, the role's links stopped; the node then closes the volumes.
  virtual void stop() = 0;
  // The `cluster` admin command's lines about the role, its volumes and its peers.
  virtual std::string status() const = 0;
  // `volume create` needs every node to know every volume; a failover cluster refuses it (why, or "").
  virtual std::string why_no_volume_create() const { return ""; }
  // What the lock manager is told when the membership opens, serves or closes a volume here
  // (its lock table follows the volume); before start(). Only a failover cluster moves volumes,
  // so the others ignore them.
  virtual void set_volume_lock_hooks(VolumeLockHooks hooks) {}
  // NLM calls forwarded to a volume's owner (nlm_forwarding.h): a handler for an interconnect
  // message (set before start(); ignored without an interconnect), and the link to a peer node
  // (null: no such peer) and every peer's name.
  virtual void set_interconnect_handler(interconnect::MessageType type,
                                        interconnect::RequestHandler handler) {}
  virtual std::shared_ptr<interconnect::CallChannel> peer_channel(const std::string& node) const {
    return nullptr;
  }
  virtual std::vector<std::string> peer_names() const { return {}; }
  // Planned failover / failback; throws std::invalid_argument outside a failover cluster.
  virtual std::string failover(bool back);
  // Planned moves: `evs ...` (what = "evs") and `volume move|cancel-move ...` (what =
  // "volume"); throws std::invalid_argument outside an N-node failover cluster.
  virtual std::string move(const std::string& what, const std::vector<std::string>& args);
  // `nasd-admin join`: re-reads the cluster config and takes in the [member]s appended to it
  // since this node started (role = storage: drives for the scale-out volume). Throws
  // std::invalid_argument when the config cannot be joined (outside a failover cluster, a
  // member changed or inserted, a new member that is not a storage node).
  virtual std::string join();

  // What the management page and the metrics show of the role (cluster/node_http.cc).
  // Each peer's name and whether its interconnect link is up; none when alone.
  virtual std::vector<std::pair<std::string, bool>> peer_links() const { return {}; }
  // The router with its ownership table; nullptr when alone (every volume is served here).
  virtual const interconnect::ClusterRouter* router() const { return nullptr; }
  // The failover membership's state; nullopt outside a failover cluster.
  virtual std::optional<ClusterFailover::Report> failover_report() const { return std::nullopt; }
  // This node's scale-out drives: compactions run and bytes they gave back; nullopt when the
  // node has none.
  struct DriveCompactions {
    uint64_t compactions = 0;
    uint64_t bytes_reclaimed = 0;
  };
  virtual std::optional<DriveCompactions> drive_compactions() const { return std::nullopt; }
};

// The strategy for `plan.role`. `plan` and `hosted` outlive it.
std::unique_ptr<Deployment> make_deployment(const NodePlan& plan, HostedVolumes& hosted);

}  // namespace nasd::cluster
