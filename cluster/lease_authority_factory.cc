#include "cluster/lease_authority_factory.h"

#include <filesystem>

#include "cluster/membership/file_lease_authority.h"

namespace nasd::cluster {

std::shared_ptr<membership::LeaseAuthority> make_lease_authority(const ClusterOptions& cluster) {
  if (cluster.authority == "file") {
    if (!cluster.failover) throw ConfigError("[cluster] authority = file needs shared_dir");
    const std::string dir = cluster.failover->shared_dir + "/leases";
    std::filesystem::create_directories(dir);
    return std::make_shared<membership::FileLeaseAuthority>(dir);
  }
  throw ConfigError("[cluster] authority = " + cluster.authority +
                    ": this build has no such lease authority");
}

}  // namespace nasd::cluster
