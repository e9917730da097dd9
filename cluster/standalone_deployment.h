// A node alone (no [cluster] section): every volume is opened and served here, and the node's
// one virtual server address is bound at start.
#pragma once

#include "cluster/deployment.h"
#include "cluster/local_volumes.h"
#include "cluster/virtual_server.h"

namespace nasd::cluster {

class StandaloneDeployment : public Deployment {
 public:
  StandaloneDeployment(const NodePlan& plan, HostedVolumes& hosted);

  std::shared_ptr<fs::VolumeResolver> resolver() override { return volumes_; }
  void open_volumes() override;
  void serve_local(std::shared_ptr<fs::Volume> volume) override;
  void start(const rpc::RpcServerOptions& options,
             const std::vector<std::shared_ptr<rpc::Service>>& programs) override;
  void stop() override;
  std::string status() const override;

 private:
  const NodePlan& plan_;
  HostedVolumes& hosted_;
  std::shared_ptr<LocalVolumes> volumes_ = std::make_shared<LocalVolumes>();
  std::unique_ptr<VirtualServer> home_server_;
};

}  // namespace nasd::cluster
