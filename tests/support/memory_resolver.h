// TEST FIXTURE ONLY: resolves volume ids to the volumes a test added (not owned).
#pragma once

#include <map>

#include "fs/volume.h"

namespace nasd::test_support {

class MemoryResolver : public fs::VolumeResolver {
 public:
  void add(fs::Volume* v) { volumes_[v->id()] = v; }
  fs::Volume* find(uint32_t volume_id) override {
    auto it = volumes_.find(volume_id);
    return it == volumes_.end() ? nullptr : it->second;
  }

 private:
  std::map<uint32_t, fs::Volume*> volumes_;
};

}  // namespace nasd::test_support
