// The one place that turns [cluster] authority settings into a LeaseAuthority, so every
// deployment (the HA pair today, larger clusters) uses the authority the operator configured.
#pragma once

#include <memory>

#include "cluster/membership/authority_options.h"
#include "cluster/membership/lease_authority.h"

namespace nasd::membership {

// File: a FileLeaseAuthority on `options.lease_dir` (created if missing). Etcd: an
// EtcdLeaseAuthority on `options.etcd` (nothing is contacted yet). Throws
// std::invalid_argument on unusable options.
std::shared_ptr<LeaseAuthority> make_lease_authority(const AuthorityOptions& options);

}  // namespace nasd::membership
