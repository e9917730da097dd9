// When a node compacts its drives (DriveStore::compact): a drive's log only grows (deleted and
// replaced units stay in it as garbage until a compaction rewrites the live ones), so each
// node checks its own drives every `check_every` and compacts at most one at a time, the one
// with the most garbage among those past both thresholds. Local to the node: no interconnect
// traffic, no coordination (a unit's key and bytes do not change, only where in the drive's
// file they sit).
//
// Bounded so that client I/O never waits on it: compact() copies without the drive's lock and
// holds it only to copy what changed meanwhile (unit_store.cc); the copy is throttled to
// max_bytes_per_sec so it does not take the drive's bandwidth from clients; one drive of the
// node at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace nasd::scaleout {

struct CompactionPolicy {
  uint64_t min_garbage_bytes = 64ull << 20;  // below this a drive is never compacted
  double min_garbage_ratio = 0.5;            // ... nor below this share of its log
  uint64_t max_bytes_per_sec = 32ull << 20;  // copy rate (0: unthrottled)
  std::chrono::milliseconds check_every{30000};  // 0: never (automatic compaction off)
};

struct DriveUsage {
  uint32_t drive = 0;
  uint64_t log_bytes = 0;
  uint64_t garbage_bytes = 0;
  bool healthy = true;
};

// The drive to compact now, or -1: the healthy drive with the most garbage among those whose
// garbage is at least min_garbage_bytes and min_garbage_ratio of its log.
int pick_drive_to_compact(const std::vector<DriveUsage>& drives, const CompactionPolicy& policy);

}  // namespace nasd::scaleout
