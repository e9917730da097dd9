#include "bench/stats.h"

namespace nasd::bench {

void OpCounters::merge(const OpCounters& other) {
  ok += other.ok;
  errors += other.errors;
  bytes += other.bytes;
  for (const auto& [status, n] : other.errors_by_status) errors_by_status[status] += n;
  latency.merge(other.latency);
}

void StepStats::record_reply(OpType op, int64_t latency_ns, int nfs_status, uint64_t bytes) {
  OpCounters& c = per_op[index_of(op)];
  if (nfs_status == 0) {
    ++c.ok;
    c.bytes += bytes;
    c.latency.record_ns(latency_ns);
  } else {
    ++c.errors;
    ++c.errors_by_status[nfs_status];
  }
}

void StepStats::merge(const StepStats& other) {
  for (int i = 0; i < kOpTypeCount; ++i) per_op[i].merge(other.per_op[i]);
  issued += other.issued;
  late_issues += other.late_issues;
}

uint64_t StepStats::ok() const {
  uint64_t n = 0;
  for (const OpCounters& c : per_op) n += c.ok;
  return n;
}

uint64_t StepStats::errors() const {
  uint64_t n = 0;
  for (const OpCounters& c : per_op) n += c.errors;
  return n;
}

uint64_t StepStats::bytes() const {
  uint64_t n = 0;
  for (const OpCounters& c : per_op) n += c.bytes;
  return n;
}

LatencyHistogram StepStats::latency() const {
  LatencyHistogram all;
  for (const OpCounters& c : per_op) all.merge(c.latency);
  return all;
}

}  // namespace nasd::bench
