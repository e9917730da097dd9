// The checker of the serving logs (cluster/serving_log.h): rebuilds each node's serving
// intervals per volume and proves that intervals of different nodes for one volume never
// overlap. Pure functions over the logs' text and what the drill recorded, so tests can feed
// them made-up logs.
//
// How an interval ends (sound: never earlier than the node could have acted):
//   stop line        min(stop time, max(trusted_until, last_served)); the stop time alone when
//                    trusted_until is "-" (static ownership, no lease to bound it)
//   killed           the first kill -9 the drill recorded after the start (recorded once the
//                    process was gone), when that comes before the next boot line or the end
//   boot, no kill    the next boot line's time (the process died by itself at the latest then),
//                    with a note: the node died without the drill killing it
//   still open       `end_ms` (the node is still serving when the drill ends)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nasd::drill {

struct ServingInterval {
  std::string node, volume;
  uint64_t epoch = 0;
  int64_t start_ms = 0, end_ms = 0;
  int64_t ready_ms = 0;  // its ready line (opened, replayed, routed); 0: none
  std::string ended;  // "stop", "lease", "kill", "boot", "open": what bounded its end
};

struct NodeServingLog {
  std::string node;
  std::string text;             // the serving.log as read
  std::vector<int64_t> kills;   // Unix ms at which the drill saw the node dead after a kill -9
};

// The intervals of one node's log; `end_ms` closes the ones still open. Lines that do not
// parse are reported in *notes (and skipped), as are deaths nobody recorded.
std::vector<ServingInterval> serving_intervals(const NodeServingLog& log, int64_t end_ms,
                                               std::vector<std::string>* notes);

struct ServingOverlap {
  ServingInterval first, second;
  int64_t overlap_ms = 0;
  std::string describe() const;
};

// Every pair of intervals of different nodes on one volume that share a moment, each end
// widened by `skew_ms` (clock skew between machines; 0 on one machine).
std::vector<ServingOverlap> find_overlaps(const std::vector<ServingInterval>& intervals, int64_t skew_ms);

}  // namespace nasd::drill
