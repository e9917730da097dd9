// Stands in for a volume that exists in the cluster but that nobody may serve right now: during
// a failover (partner fenced, journal not yet replayed here) or after this node fenced itself.
// Every call answers Jukebox so NFS clients wait and retry; answering Stale instead would make
// them drop their file handles for good.
#pragma once

#include <optional>

#include "fs/call/calls.h"
#include "fs/volume.h"

namespace nasd::interconnect {

class UnavailableVolume : public fs::Volume {
 public:
  UnavailableVolume(uint32_t volume_id, fs::InodeId root) : id_(volume_id), root_(root) {}

  uint32_t id() const override { return id_; }
  fs::InodeId root() const override { return root_; }
  fs::VolumeLimits limits() const override { return {}; }
  uint64_t write_verifier() const override { return 0; }

  fs::call::VolumeReply call(const fs::call::VolumeRequest& req) override {
    fs::call::VolumeReply reply;
    reply.op = req.op();
    reply.status = fs::Status::Jukebox;
    return reply;
  }
  // "Would block": the executor's call() answers (NFS does not count on this volume's speed).
  std::optional<fs::call::VolumeReply> try_call(const fs::call::VolumeRequest&) override {
    return std::nullopt;
  }

 private:
  const uint32_t id_;
  const fs::InodeId root_;
};

}  // namespace nasd::interconnect
