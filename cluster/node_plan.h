// The node's configuration, parsed once when the node is made: who it is, its journal, its role
// in a cluster and every volume with its id and where it is served. The node and its deployment
// strategy (cluster/deployment.h) decide everything from this plan; nothing else in cluster/
// reads the [node], [nvram], [cluster] or [peer] sections or a [volume]'s id. Each room's own
// options struct still reads and checks its own keys (LfsOptions the rest of a [volume], the
// exports the [export]s, the transport the listener keys of [node]), so unknown keys are still
// rejected where they belong.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster_options.h"
#include "cluster/node_options.h"
#include "nvram/journal_options.h"
#include "util/config.h"
#include "util/link_handshake.h"

namespace nasd::cluster {

enum class NodeRole {
  Alone,          // no [cluster]: every volume is served here
  StaticCluster,  // [cluster] without shared_dir: each volume served by its owner, forwarded by the rest
  // [cluster] shared_dir: 2 to 8 nodes ([member]s, or the pair form's one [peer]), each covering
  // the nodes it mirrors; the membership decides which node serves which volume.
  FailoverCluster,
};

const char* role_name(NodeRole role);

struct PlannedVolume {
  std::string name;
  uint32_t id = 0;
  // Alone or StaticCluster: the node that serves it, "" for this node. FailoverCluster: whose
  // home volume it is ("" for this node, else the peer's name); the
  // membership moves it.
  std::string owner;
};

struct NodePlan {
  // The file, then the cluster's file ([node] cluster_config), then <data_dir>/volumes.conf
  // (volumes the admin created).
  Config config;
  NodeOptions node;
  std::optional<ClusterOptions> cluster;
  nvram::JournalOptions journal;  // journal.enabled is false for `[nvram] mode = off`
  NodeRole role = NodeRole::Alone;
  std::vector<PlannedVolume> volumes;
  // The cluster key and this node's name, which every interconnect and mirror link proves;
  // loaded from the key file when the node starts (Node::load_cluster_key), not parsed.
  link::Credentials link;

  // Throws ConfigError: a missing or bad section or key, no [volume], two volumes with one id.
  static NodePlan from_config(Config config);

  // <data_dir>/volumes.conf: the volumes the admin created, appended at every start.
  std::string admin_volumes_file() const { return node.in_data_dir("volumes.conf"); }
  // Adds the [volume] sections of `more` (checked as from_config does) to the plan.
  void add_volumes(const Config& more);
  const PlannedVolume* volume(const std::string& name) const;
  // The next id no planned volume uses (max + 1, 0 when there is none).
  uint32_t next_free_id() const;

 private:
  void add_volume(const ConfigSection& section);
};

}  // namespace nasd::cluster
