#include "cluster/lease_authority_factory.h"

#include <stdexcept>

#include "cluster/membership/lease_authority_factory.h"

namespace nasd::cluster {

std::shared_ptr<membership::LeaseAuthority> make_lease_authority(const ClusterOptions& cluster) {
  if (cluster.authority.kind == membership::AuthorityOptions::Kind::File &&
      cluster.authority.lease_dir.empty())
    throw ConfigError("[cluster] authority = file needs shared_dir");
  try {
    return membership::make_lease_authority(cluster.authority);
  } catch (const std::exception& e) {
    throw ConfigError(std::string("[cluster] authority: ") + e.what());
  }
}

}  // namespace nasd::cluster
