// A local volume behind its owner's lease: every call first asks `may_serve` (the membership's
// lease check) and answers NFS3ERR_JUKEBOX when it says no, so a node whose lease ran out while
// it was not scheduled refuses requests before it has even noticed. Checked per call, not when
// the router hands the volume out, so a request that found the volume just before the lease
// ran out is refused too. The client retries and reaches whoever owns the volume by then.
#pragma once

#include <functional>
#include <memory>
#include <utility>

#include "fs/wrapped_volume.h"

namespace nasd::interconnect {

class FencedVolume : public fs::WrappedVolume {
 public:
  FencedVolume(std::shared_ptr<fs::Volume> inner, std::function<bool()> may_serve)
      : WrappedVolume(std::move(inner)), may_serve_(std::move(may_serve)) {}

 protected:
  fs::Status admit(const fs::OpContext&) override {
    return may_serve_() ? fs::Status::Ok : fs::Status::Jukebox;
  }

 private:
  const std::function<bool()> may_serve_;
};

}  // namespace nasd::interconnect
