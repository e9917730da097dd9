#include "cluster/local_volumes.h"

#include <mutex>

namespace nasd::cluster {

void LocalVolumes::add(std::shared_ptr<fs::Volume> volume) {
  std::unique_lock lock(mu_);
  volumes_[volume->id()] = std::move(volume);
}

fs::Volume* LocalVolumes::find(uint32_t volume_id) {
  std::shared_lock lock(mu_);
  auto it = volumes_.find(volume_id);
  return it == volumes_.end() ? nullptr : it->second.get();
}

}  // namespace nasd::cluster
