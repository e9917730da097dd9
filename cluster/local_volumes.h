// The name space of a single node: every volume is local. The cluster router (local or forward
// to the owning node) replaces it when a node joins a cluster; both are VolumeResolvers.
#pragma once

#include <map>
#include <memory>
#include <shared_mutex>

#include "fs/volume.h"

namespace nasd::cluster {

class LocalVolumes : public fs::VolumeResolver {
 public:
  void add(std::shared_ptr<fs::Volume> volume);
  fs::Volume* find(uint32_t volume_id) override;

 private:
  std::shared_mutex mu_;
  std::map<uint32_t, std::shared_ptr<fs::Volume>> volumes_;
};

}  // namespace nasd::cluster
