// [pool NAME] in an N-node cluster's config: a SmartConnect-style pool of client addresses
// spread over the nodes (membership/address_pool.h), each serving NFS and MOUNT for every volume
// (forwarding), moved to survivors when a node fails and back when it returns.
//
//   [pool clients]
//   addresses = 127.0.4.1-127.0.4.8    # a list, and/or a.b.c.d-e ranges of the last octet
//   nfs_port = 2049
//   mount_port = 20048
//   nodes = n1, n2, n3, n4             # default: every primary [member], in member order
//   interface = eth1                   # optional: the serving node puts each address on eth1
//   prefix = 24                        # with this prefix (required with interface), announces
//                                      # it and removes it when it moves away (cluster/address/)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/cluster_options.h"
#include "util/config.h"

namespace nasd::cluster {

struct PoolOptions {
  std::string name;
  std::vector<std::string> addresses;  // in pool order: address i's home is nodes[i mod n]
  uint16_t nfs_port = 2049, mount_port = 20048;
  std::vector<std::string> nodes;
  // With `interface`: addresses[i] on that interface (same order); empty without.
  std::vector<address::InterfaceAddress> on_interface;
};

// Throws ConfigError on an unknown key, a malformed address or range, an address given twice
// (in one pool or two), more than 1024 addresses, a node that is no primary member, or an
// address that is also an [evs] listen address, an interface without a prefix or the reverse.
std::vector<PoolOptions> pools_from_config(const Config& config, const ClusterOptions& cluster);

}  // namespace nasd::cluster
