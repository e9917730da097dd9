// One node of an HA pair ([cluster] shared_dir): the cluster wiring, but nothing is served at
// start. Every volume starts as the partner's (requests meanwhile go to the partner, which
// answers NFS3ERR_JUKEBOX for what it does not serve either); the membership (Failover) grants
// leases, opens the volumes, binds this node's address and, after a takeover, the partner's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster_deployment.h"
#include "cluster/failover.h"

namespace nasd::cluster {

class HaPairDeployment : public ClusterDeployment {
 public:
  HaPairDeployment(const NodePlan& plan, HostedVolumes& hosted);
  ~HaPairDeployment() override;

  void open_volumes() override;
  void start(const rpc::RpcServerOptions& options,
             const std::vector<std::shared_ptr<rpc::Service>>& programs) override;
  void stop() override;
  std::string status() const override;
  std::string why_no_volume_create() const override;
  std::string failover(bool back) override;
  void set_volume_hooks(std::function<void(uint32_t id, bool home)> opened,
                        std::function<void(uint32_t id)> closed) override {
    volume_opened_ = std::move(opened);
    volume_closed_ = std::move(closed);
  }
  std::optional<Failover::Report> failover_report() const override {
    if (!failover_) return std::nullopt;
    return failover_->report();
  }

 private:
  std::unique_ptr<Failover> failover_;
  std::function<void(uint32_t id, bool home)> volume_opened_;
  std::function<void(uint32_t id)> volume_closed_;
};

}  // namespace nasd::cluster
