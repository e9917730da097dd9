// TEST FIXTURE ONLY: a CallChannel that executes forwarded Volume calls in-process on the
// volumes of a resolver, through the real codec but without sockets. Can be switched "down"
// to play an unreachable owner.
#pragma once

#include <atomic>
#include <map>

#include "cluster/interconnect/call_channel.h"
#include "fs/call/codec.h"
#include "fs/call/dispatch.h"
#include "fs/volume.h"

namespace nasd::cluster::testing {

class LoopbackChannel : public interconnect::CallChannel {
 public:
  explicit LoopbackChannel(fs::VolumeResolver* owner) : owner_(owner) {}
  void set_down(bool down) { down_ = down; }
  uint64_t calls() const { return calls_; }

  interconnect::CallOutcome call(interconnect::MessageType, std::vector<uint8_t> payload,
                                 std::chrono::milliseconds) override {
    using namespace interconnect;
    using namespace fs::call;
    ++calls_;
    if (down_) return {CallError::NotConnected, {}};
    VolumeRequest req;
    if (!decode_request(payload, &req)) return {CallError::None, {}};
    fs::Volume* v = owner_->find(req.volume_id);
    VolumeReply reply = v ? execute_volume_call(*v, req)
                          : refused_volume_call(req.op(), fs::Status::Stale);
    return {CallError::None, encode_reply(reply)};
  }

 private:
  fs::VolumeResolver* owner_;
  std::atomic<bool> down_{false};
  std::atomic<uint64_t> calls_{0};
};

// A resolver over a fixed set of volumes.
class MapResolver : public fs::VolumeResolver {
 public:
  void add(fs::Volume* v) { volumes_[v->id()] = v; }
  fs::Volume* find(uint32_t id) override {
    auto it = volumes_.find(id);
    return it == volumes_.end() ? nullptr : it->second;
  }

 private:
  std::map<uint32_t, fs::Volume*> volumes_;
};

}  // namespace nasd::cluster::testing
