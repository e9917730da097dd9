// One node of a failover cluster ([cluster] shared_dir; [member]s, or the pair form's one
// [peer]): the cluster wiring (router, interconnect, a link to every peer), the node's own
// address bound at start (it never moves and reaches every volume; in the pair form it is the
// node's EVS instead, and moves with its volumes), and ClusterFailover, which opens, serves and hands
// over volumes and EVS addresses as the membership decides. Every volume starts routed to its
// home node.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/cluster_deployment.h"
#include "cluster/cluster_failover.h"
#include "cluster/pool_options.h"

namespace nasd::scaleout {
class IfsNode;
}

namespace nasd::cluster {

class AddressPoolServer;
class IfsEdgeResolver;

class FailoverClusterDeployment : public ClusterDeployment {
 public:
  FailoverClusterDeployment(const NodePlan& plan, HostedVolumes& hosted);
  ~FailoverClusterDeployment() override;

  // The router; with a scale-out volume, wrapped so that its READs are answered on this node
  // from the units (ifs_edge_resolver.h).
  std::shared_ptr<fs::VolumeResolver> resolver() override;
  void open_volumes() override;
  void start(const rpc::RpcServerOptions& options,
             const std::vector<std::shared_ptr<rpc::Service>>& programs) override;
  void quiesce() override;
  void stop() override;
  std::string status() const override;
  std::string why_no_volume_create() const override;
  std::string failover(bool back) override;
  std::string move(const std::string& what, const std::vector<std::string>& args) override;
  std::string join() override;
  void set_volume_lock_hooks(VolumeLockHooks hooks) override { lock_hooks_ = std::move(hooks); }
  std::optional<ClusterFailover::Report> failover_report() const override {
    if (!failover_) return std::nullopt;
    return failover_->report();
  }
  std::optional<DriveCompactions> drive_compactions() const override;

 private:
  // This node's part of the scale-out volume, when the cluster has one: its drives and unit
  // service run on every member whether or not it coordinates the volume.
  void start_scaleout();
  // `nasd-admin cluster`: how this node's READs of the scale-out volume were answered.
  std::string scaleout_line() const;
  std::string joined_lines() const;  // the status lines of the nodes that joined
  // Before any address is served: removes the addresses a crashed run left on interfaces, and
  // checks that every EVS and pool address on an interface can be served here (the interface
  // exists, the subnet fits, CAP_NET_ADMIN and CAP_NET_RAW). Throws naming what is wrong.
  void start_interface_addresses(const std::vector<PoolOptions>& pools);
  std::unique_ptr<address::HostedAddress> hosted_address(const address::InterfaceAddress* on) const;

  // Links to the nodes that joined after the start (join()); they own no volume, so the
  // router never forwards to them: only the scale-out unit calls use these. Declared before
  // scaleout_, which refers to them, so they outlive it.
  mutable std::mutex join_mu_;
  std::map<std::string, std::shared_ptr<interconnect::PeerClient>> joined_;  // guarded by join_mu_
  std::unique_ptr<scaleout::IfsNode> scaleout_;
  std::shared_ptr<IfsEdgeResolver> edge_;  // null without a scale-out volume
  std::unique_ptr<VirtualServer> node_server_;
  // <data_dir>/interface-addresses: the EVS and pool addresses this node put on interfaces
  // (cluster/address/address_record.h); null when no address names an interface.
  std::shared_ptr<address::AddressRecord> address_record_;
  std::unique_ptr<ClusterFailover> failover_;
  std::unique_ptr<AddressPoolServer> pools_;  // [pool] addresses; null without pools
  VolumeLockHooks lock_hooks_;
};

}  // namespace nasd::cluster
