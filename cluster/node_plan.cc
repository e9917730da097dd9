#include "cluster/node_plan.h"

#include <algorithm>
#include <filesystem>
#include <set>

namespace nasd::cluster {
namespace {

PlannedVolume plan_volume(const ConfigSection& s, const std::optional<ClusterOptions>& cluster) {
  PlannedVolume v;
  v.name = s.name();
  v.id = s.get_u32("id", 0);
  if (const PeerOptions* owner = cluster ? cluster->owner_of(s.name()) : nullptr) v.owner = owner->name;
  return v;
}

}  // namespace

const char* role_name(NodeRole role) {
  switch (role) {
    case NodeRole::Alone: return "alone";
    case NodeRole::StaticCluster: return "static cluster";
    case NodeRole::FailoverCluster: return "failover cluster";
  }
  return "?";
}

NodePlan NodePlan::from_config(Config config) {
  NodePlan p;
  p.node = NodeOptions::from_config(config);
  p.config = std::move(config);
  if (const ConfigSection* n = p.config.section("node"); n && n->has("cluster_config"))
    p.config.append(Config::load(p.config.resolve_path(n->get("cluster_config"))));
  if (std::filesystem::exists(p.admin_volumes_file()))
    p.config.append(Config::load(p.admin_volumes_file()));
  p.cluster = ClusterOptions::from_config(p.config);
  p.role = !p.cluster          ? NodeRole::Alone
           : p.cluster->failover ? NodeRole::FailoverCluster
                                 : NodeRole::StaticCluster;
  p.journal = nvram::JournalOptions::from_config(p.config, p.node.data_dir);
  // In a failover cluster (a pair too) every record reaches the copy at the member that covers
  // this node before it is acknowledged (none for a standby).
  if (p.role == NodeRole::FailoverCluster && p.journal.mirror.empty())
    p.journal.mirror = p.cluster->member(p.node.name)->mirror_target;
  auto sections = p.config.sections("volume");
  if (sections.empty()) throw ConfigError(p.config.origin() + ": no [volume NAME] section");
  for (const ConfigSection* s : sections) p.add_volume(*s);
  return p;
}

void NodePlan::add_volumes(const Config& more) {
  for (const ConfigSection* s : more.sections("volume")) add_volume(*s);
  config.append(more);
}

void NodePlan::add_volume(const ConfigSection& section) {
  PlannedVolume v = plan_volume(section, cluster);
  if (volume(v.name)) throw ConfigError("[volume " + v.name + "] exists already");
  for (const PlannedVolume& other : volumes)
    if (other.id == v.id)
      throw ConfigError("[volume " + v.name + "] id " + std::to_string(v.id) + " is [volume " +
                        other.name + "]'s already");
  volumes.push_back(std::move(v));
}

const PlannedVolume* NodePlan::volume(const std::string& name) const {
  for (const PlannedVolume& v : volumes)
    if (v.name == name) return &v;
  return nullptr;
}

uint32_t NodePlan::next_free_id() const {
  uint32_t next = 0;
  for (const PlannedVolume& v : volumes) next = std::max<uint32_t>(next, v.id + 1);
  return next;
}

}  // namespace nasd::cluster
