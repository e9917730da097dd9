#include "cluster/standalone_deployment.h"

#include <stdexcept>

namespace nasd::cluster {

StandaloneDeployment::StandaloneDeployment(const NodePlan& plan, HostedVolumes& hosted)
    : plan_(plan), hosted_(hosted) {}

void StandaloneDeployment::open_volumes() {
  for (const PlannedVolume& v : plan_.volumes)
    serve_local(hosted_.open(*plan_.config.section("volume", v.name), plan_.config, plan_.node.data_dir));
}

void StandaloneDeployment::serve_local(std::shared_ptr<fs::Volume> volume) {
  volumes_->add(std::move(volume));
}

void StandaloneDeployment::start(const rpc::RpcServerOptions& options,
                                 const std::vector<std::shared_ptr<rpc::Service>>& programs) {
  home_server_ = std::make_unique<VirtualServer>(plan_.node.name, options, programs, true);
  if (!home_server_->bind()) throw std::runtime_error("cannot serve NFS on " + home_server_->describe());
}

void StandaloneDeployment::stop() {
  if (home_server_) home_server_->release();
}

std::string StandaloneDeployment::status() const {
  return "node " + plan_.node.name + ": alone (no [cluster] section), every volume local\n";
}

}  // namespace nasd::cluster
