// The one place that turns `[cluster] authority` into a LeaseAuthority, so a new authority
// (etcd) plugs in here and every failover role (the pair, the N-node cluster) gets it.
//   file  leases in <shared_dir>/leases (FileLeaseAuthority): one machine, or a real shared
//         file system with one clock
//   etcd  leases in etcd ([cluster] etcd_endpoints); built by the etcd authority when present
#pragma once

#include <memory>

#include "cluster/cluster_options.h"
#include "cluster/membership/lease_authority.h"

namespace nasd::cluster {

// Throws ConfigError when the configured authority cannot be made.
std::shared_ptr<membership::LeaseAuthority> make_lease_authority(const ClusterOptions& cluster);

}  // namespace nasd::cluster
