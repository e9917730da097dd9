// What one worker measured in one step, per NFS procedure. Only replies that arrive inside a
// step's measured interval are counted there; a successful reply adds to throughput and latency,
// a failed one (NFS error status or RPC failure) only to the error counts.
#pragma once

#include <array>
#include <cstdint>
#include <map>

#include "bench/histogram.h"
#include "bench/op_type.h"

namespace nasd::bench {

// Status recorded for a reply that never carried an NFS status (RPC error, cancel, timeout).
inline constexpr int kRpcFailure = -1;

struct OpCounters {
  uint64_t ok = 0;
  uint64_t errors = 0;
  uint64_t bytes = 0;                        // READ/WRITE payload of successful replies
  std::map<int, uint64_t> errors_by_status;  // nfsstat3 value (or kRpcFailure) -> count
  LatencyHistogram latency;                  // successful replies only

  void merge(const OpCounters& other);
};

struct StepStats {
  std::array<OpCounters, kOpTypeCount> per_op;
  uint64_t issued = 0;        // requests sent during the step (warmup included)
  uint64_t late_issues = 0;   // requests sent after their due time because the in-flight cap was full

  void record_reply(OpType op, int64_t latency_ns, int nfs_status, uint64_t bytes = 0);
  void merge(const StepStats& other);

  uint64_t ok() const;
  uint64_t errors() const;
  uint64_t bytes() const;  // READ/WRITE payload, all procedures
  LatencyHistogram latency() const;  // all procedures together
};

}  // namespace nasd::bench
