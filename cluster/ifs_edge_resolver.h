// What the NFS server of a failover-cluster node resolves volumes with when the cluster has a
// scale-out volume: the router, except that a READ of the scale-out volume coordinated by
// another node is answered here, from the units, by IfsNode::read_direct (the coordinator
// only says where the bytes are: cluster/scaleout/read_layout.h). Every other call, and a READ
// that cannot be answered directly (no layout in time, JUKEBOX, groups unreadable after
// retries), goes the router's way: to the local volume or forwarded to the coordinator.
//
// find() wraps the router's answer, never replaces it: the router stays the one place that
// decides who serves a volume, and the wrapper asks it on every call. A wrapper is made once
// per proxy the router hands out (the router keeps every proxy alive, so the pointers stay
// valid) and kept for the resolver's lifetime.
//
// Replay (util/resumable_call.h): a forwarded READ parks and runs again; the run again tries
// the direct path first, so it may answer from the units and leave the forwarded answer
// unused — harmless, both are answers to the same READ (the direct one is at least as new).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "fs/volume.h"

namespace nasd::interconnect {
class ClusterRouter;
}
namespace nasd::scaleout {
class IfsNode;
}

namespace nasd::cluster {

class IfsEdgeResolver : public fs::VolumeResolver {
 public:
  IfsEdgeResolver(std::shared_ptr<interconnect::ClusterRouter> router, uint32_t volume_id);
  ~IfsEdgeResolver() override;
  // This node's IfsNode and every member's scale-out node id by name; before the node serves.
  // Until then every call goes the router's way.
  void attach(scaleout::IfsNode* node, std::map<std::string, uint32_t> ids);
  fs::Volume* find(uint32_t volume_id) override;

 private:
  class Edge;
  const std::shared_ptr<interconnect::ClusterRouter> router_;
  const uint32_t volume_id_;
  std::mutex mu_;
  scaleout::IfsNode* node_ = nullptr;                  // guarded by mu_
  std::map<std::string, uint32_t> ids_;                // guarded by mu_
  // guarded by mu_: by the router's proxy and the coordinator it was made for
  std::map<std::pair<fs::Volume*, uint32_t>, std::unique_ptr<Edge>> edges_;
};

}  // namespace nasd::cluster
