// The volume's background thread: write-behind of unstable data and journalled operations,
// periodic checkpoints, and cleaning when free segments run low. One pass every
// flush_interval_ms, or sooner when poked (a util::PeriodicWorker).
#pragma once

#include <chrono>

#include "util/periodic_worker.h"

namespace nasd::fs::lfs {

class LfsVolume;

class BackgroundWorker {
 public:
  explicit BackgroundWorker(LfsVolume* vol);
  ~BackgroundWorker();  // stops and joins
  // Asks for a pass now (e.g. when dirty data piles up).
  void poke() { worker_.nudge(); }

 private:
  void pass();

  LfsVolume* vol_;
  std::chrono::steady_clock::time_point last_checkpoint_;  // only the worker's thread uses it
  util::PeriodicWorker worker_;
};

}  // namespace nasd::fs::lfs
