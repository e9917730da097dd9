// Scheduled snapshots, as appliances keep them: `[volume NAME] snapshot_schedule` lists rules
// `PERIOD:KEEP` separated by commas, e.g. `hourly:24, daily:7, weekly:4` or `15m:8`.
//   PERIOD  hourly | daily | weekly, or a duration N followed by s, m, h or d (at least 1s)
//   KEEP    how many snapshots of the rule to retain (1..kMaxSnapshots)
// A rule fires once per period, at the UTC period boundary (midnight for daily, Monday 00:00
// for weekly, multiples of N since the epoch for durations), and names its snapshot
// `LABEL.YYYY-MM-DD_HHMMSS` after that boundary: LABEL is hourly/daily/weekly, or `everyN<u>`.
// After taking one it deletes the oldest of that rule beyond KEEP. Snapshots taken by hand
// (any other name) are never expired. A period missed while the node was down is taken once,
// when it comes back; older missed ones are not made up.
//
// plan_snapshots() is a pure function of the schedule, the snapshots that exist and the time,
// so the background worker only executes what it returns and tests need no clock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fs/lfs/snapshot_catalog.h"

namespace nasd::fs::lfs {

struct SnapshotRule {
  std::string label;
  int64_t period = 0;  // seconds
  uint32_t keep = 0;
};

struct SnapshotSchedule {
  std::vector<SnapshotRule> rules;
  bool empty() const { return rules.empty(); }
  // Throws std::invalid_argument naming the bad rule. An empty string is an empty schedule.
  static SnapshotSchedule parse(const std::string& text);
};

struct SnapshotPlan {
  std::vector<std::string> create;  // names to take now, in this order
  std::vector<std::string> remove;  // names to delete after that
};

SnapshotPlan plan_snapshots(const SnapshotSchedule& schedule,
                            const std::vector<SnapshotInfo>& existing, int64_t now);

// `label.YYYY-MM-DD_HHMMSS` in UTC.
std::string scheduled_name(const std::string& label, int64_t t);

}  // namespace nasd::fs::lfs
