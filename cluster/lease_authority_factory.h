// The one place that turns `[cluster] authority` into a LeaseAuthority, so every failover role
// (the pair, larger clusters) gets the authority the operator configured.
//   file  leases in <shared_dir>/leases (FileLeaseAuthority): one machine, or a real shared
//         file system with one clock
//   etcd  leases in etcd ([cluster] etcd_endpoints, EtcdLeaseAuthority): nodes on several
//         machines
#pragma once

#include <memory>

#include "cluster/cluster_options.h"
#include "cluster/membership/lease_authority.h"

namespace nasd::cluster {

// Throws ConfigError when the configured authority cannot be made.
std::shared_ptr<membership::LeaseAuthority> make_lease_authority(const ClusterOptions& cluster);

}  // namespace nasd::cluster
