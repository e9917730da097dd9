// The node's UnmirroredGate (nvram/unmirrored_gate.h) in a failover cluster: before the journal
// acknowledges a stable write its mirror partner lacks, the mark "the mirror of <self> at
// <partner> is stale" is stored in the placement record at the lease authority (the shared
// folder or etcd: placement_store.h), so the partner does not take this node's volumes over
// from that copy (ClusterMember). Once the mirror holds every record again, the mark is cleared.
// The decisions are StaleMirrorMark's (pure, simulated); this class only carries its Record and
// Clear requests out on a thread of its own, so the journal never waits on the authority for
// longer than `admit_within`: past that, or when the authority cannot be written, the write is
// refused (JUKEBOX) rather than acknowledged unmarked, and the node degrades without hanging.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "cluster/membership/placement.h"
#include "cluster/membership/placement_store.h"
#include "cluster/membership/stale_mirror_mark.h"
#include "nvram/unmirrored_gate.h"

namespace nasd::cluster {

struct StaleMirrorGateOptions {
  std::string self;
  std::string partner;  // the node holding this node's mirror
  std::chrono::milliseconds admit_within{3000};
  std::chrono::milliseconds retry_after{500};  // refuse at once this long after a failed mark
};

class StaleMirrorGate : public nvram::UnmirroredGate {
 public:
  // `written`: every placement record the gate wrote (for the membership's view); may be empty.
  StaleMirrorGate(StaleMirrorGateOptions options, std::shared_ptr<membership::PlacementStore> store,
                  membership::Placement from_config, uint64_t log_end,
                  std::function<void(const membership::Placement&)> written);
  ~StaleMirrorGate() override;  // stop()
  void stop();

  bool admit_unmirrored(uint64_t end) override;
  void mirror_holds(uint64_t end) override;
  // The node opened its own volumes again after its start (ClusterMember::settled): until
  // then a mark an earlier run left stands, even once the mirror caught up, so the partner
  // does not take those volumes over while this node comes back.
  void node_settled();
  // A placement record read at the authority: one newer than the mark this node stored that
  // lacks it was cleared by the admin, so the next unmirrored write must mark it again.
  void placement_seen(const membership::Placement& p);
  // For `nasd-admin cluster`: "clean", "stale since 123 (marked at the authority)", ...
  std::string describe() const;

 private:
  void run();
  void queue_actions_locked();  // the mark's actions, for the worker
  int64_t now_ms() const;

  const StaleMirrorGateOptions options_;
  const std::shared_ptr<membership::PlacementStore> store_;
  const membership::Placement from_config_;
  const std::function<void(const membership::Placement&)> written_;
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();

  mutable std::mutex mu_;
  std::condition_variable answered_cv_;  // a Record or Clear was answered
  std::condition_variable work_cv_;      // requests for the worker
  membership::StaleMirrorMark mark_;
  std::deque<membership::StaleMirrorMark::Action> work_;
  uint64_t marked_version_ = 0;  // the record version the current mark was stored at
  uint64_t refusals_ = 0;
  std::string last_error_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace nasd::cluster
