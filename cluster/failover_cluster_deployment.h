// One node of a failover cluster ([cluster] shared_dir; [member]s, or the pair form's one
// [peer]): the cluster wiring (router, interconnect, a link to every peer), the node's own
// address bound at start (it never moves and reaches every volume; in the pair form it is the
// node's EVS instead, and moves with its volumes), and ClusterFailover, which opens, serves and hands
// over volumes and EVS addresses as the membership decides. Every volume starts routed to its
// home node.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster_deployment.h"
#include "cluster/cluster_failover.h"

namespace nasd::scaleout {
class IfsNode;
}

namespace nasd::cluster {

class AddressPoolServer;

class FailoverClusterDeployment : public ClusterDeployment {
 public:
  FailoverClusterDeployment(const NodePlan& plan, HostedVolumes& hosted);
  ~FailoverClusterDeployment() override;

  void open_volumes() override;
  void start(const rpc::RpcServerOptions& options,
             const std::vector<std::shared_ptr<rpc::Service>>& programs) override;
  void stop() override;
  std::string status() const override;
  std::string why_no_volume_create() const override;
  std::string failover(bool back) override;
  std::string move(const std::string& what, const std::vector<std::string>& args) override;
  void set_volume_lock_hooks(VolumeLockHooks hooks) override { lock_hooks_ = std::move(hooks); }
  std::optional<ClusterFailover::Report> failover_report() const override {
    if (!failover_) return std::nullopt;
    return failover_->report();
  }

 private:
  // This node's part of the scale-out volume, when the cluster has one: its drives and unit
  // service run on every member whether or not it coordinates the volume.
  void start_scaleout();

  std::unique_ptr<scaleout::IfsNode> scaleout_;
  std::unique_ptr<VirtualServer> node_server_;
  std::unique_ptr<ClusterFailover> failover_;
  std::unique_ptr<AddressPoolServer> pools_;  // [pool] addresses; null without pools
  VolumeLockHooks lock_hooks_;
};

}  // namespace nasd::cluster
