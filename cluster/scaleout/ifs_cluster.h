// What a scale-out volume (ifs_volume.h) needs of the cluster around it: a way to every node's
// stripe units, and the current view of which nodes and drives are alive. IfsNode
// (ifs_node.h) is the daemon's; the tests give an in-process one.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cluster/scaleout/group_io.h"
#include "cluster/scaleout/layout.h"

namespace nasd::scaleout {

class IfsVolume;

class IfsCluster {
 public:
  virtual ~IfsCluster() = default;
  // Reaches the drives of every node (this node's directly). Outlives the volume.
  virtual UnitAccess* units() = 0;
  // Every configured node, alive or not (ids ascending), each with its drives.
  virtual Topology topology() = 0;
  virtual uint32_t drives_per_node() const = 0;
  // The volume this node coordinates, once its journal replay is done; nullptr when it stops
  // (before it is closed or abandoned). IfsNode answers other nodes' read layouts from it.
  virtual void coordinating(std::shared_ptr<IfsVolume> volume) {}
};

}  // namespace nasd::scaleout
