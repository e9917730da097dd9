// The cluster description a drill runs against: `$CLUSTER_DIR/cluster.nodes`, written by
// deploy/start-cluster.sh, one line per node of space-separated key=value pairs:
//   name=a address=127.0.0.1 nfs_port=2049 mount_port=20048 interconnect=127.0.0.1:7001
//   mirror=127.0.0.1:7101 http=127.0.0.1:8049 admin=<socket> pid=<pid file> config=<conf>
//   data_dir=<dir> volumes=v0[,v1...] evs=<name or empty>
// Blank lines and lines starting with '#' are skipped; unknown keys are kept (newer writers may
// add some) but the ones the drill needs must be there.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nasd::drill {

struct Endpoint {
  std::string host;
  uint16_t port = 0;
};

struct ClusterNode {
  std::string name, address;
  uint16_t nfs_port = 0, mount_port = 0;
  Endpoint interconnect, mirror;
  std::string http, admin, pid_file, config, data_dir, evs;
  std::vector<std::string> volumes;  // its home volumes
  std::map<std::string, std::string> all;  // every key as written
};

// Parses the file's text; nullopt with *error naming the line and what is wrong.
std::optional<std::vector<ClusterNode>> parse_cluster_nodes(std::istream& in, std::string* error);

// The volumes of the verifying clients attached to each node: `per_node` clients per node, the
// k-th one on a volume of the primary k places after it (k = 0: its own, served locally; the
// others forwarded), taking that primary's k-th volume. So with as many clients per node as
// volumes per primary every volume gets exactly one client and every node forwards to every
// other (4 nodes x 4 volumes: 16 clients, 16 volumes); on the pair: a->v0, a->v1, b->v1, b->v0.
// A standby (no volumes) gets clients too, all forwarded. Result [i]: node i's volumes.
std::vector<std::vector<std::string>> client_volumes(const std::vector<ClusterNode>& nodes, int per_node);

// "host:port"; nullopt when it is not that.
std::optional<Endpoint> parse_endpoint(const std::string& text);

}  // namespace nasd::drill
