#include "cluster/deployment.h"

#include <stdexcept>

#include "cluster/cluster_deployment.h"
#include "cluster/failover_cluster_deployment.h"
#include "cluster/standalone_deployment.h"

namespace nasd::cluster {

std::string Deployment::failover(bool) {
  throw std::invalid_argument("this node is not one of a failover cluster ([cluster] shared_dir)");
}

std::string Deployment::move(const std::string&, const std::vector<std::string>&) {
  throw std::invalid_argument(
      "planned moves need an N-node failover cluster ([member]s and a shared folder)");
}

std::string Deployment::join() {
  throw std::invalid_argument("join: only a failover cluster with [member]s takes in new nodes");
}

std::unique_ptr<Deployment> make_deployment(const NodePlan& plan, HostedVolumes& hosted) {
  switch (plan.role) {
    case NodeRole::Alone: return std::make_unique<StandaloneDeployment>(plan, hosted);
    case NodeRole::StaticCluster: return std::make_unique<ClusterDeployment>(plan, hosted);
    case NodeRole::FailoverCluster: return std::make_unique<FailoverClusterDeployment>(plan, hosted);
  }
  throw std::logic_error("unknown node role");
}

}  // namespace nasd::cluster
