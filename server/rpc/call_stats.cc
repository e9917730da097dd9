#include "server/rpc/call_stats.h"

#include <bit>

namespace nasd::rpc {

std::string_view transport_counter_name(TransportCounter c) {
  static constexpr std::string_view kNames[kTransportCounters] = {
      "connections_accepted", "connections_closed", "accept_errors",   "tcp_records",
      "udp_datagrams",        "bad_records",        "oversized_records", "udp_dropped",
      "drc_hits",             "drc_inprogress_drops", "rpc_mismatch",  "auth_errors",
      "prog_unavail",         "prog_mismatch",      "proc_unavail",    "replies_sent",
      "bytes_received",       "bytes_sent",         "short_writes",
  };
  size_t i = static_cast<size_t>(c);
  return i < kTransportCounters ? kNames[i] : "?";
}

size_t latency_bucket(uint64_t micros) {
  if (micros < 2) return 0;
  size_t b = static_cast<size_t>(std::bit_width(micros)) - 1;
  return b < kLatencyBuckets ? b : kLatencyBuckets - 1;
}

double ProcSnapshot::percentile_us(double q) const {
  uint64_t total = 0;
  for (uint64_t b : buckets) total += b;
  if (total == 0) return 0.0;
  double target = q * double(total);
  double seen = 0;
  for (size_t i = 0; i < kLatencyBuckets; ++i) {
    if (buckets[i] == 0) continue;
    if (seen + double(buckets[i]) >= target) {
      double lo = i == 0 ? 0.0 : double(uint64_t{1} << i);
      double hi = double(uint64_t{1} << (i + 1));
      double frac = (target - seen) / double(buckets[i]);
      return lo + frac * (hi - lo);
    }
    seen += double(buckets[i]);
  }
  return double(uint64_t{1} << kLatencyBuckets);
}

CallStats::CallStats() = default;
CallStats::~CallStats() = default;

void CallStats::add_program(uint32_t prog, uint32_t vers, std::string name,
                            std::vector<std::string> proc_names) {
  for (auto& t : tables_)
    if (t.prog == prog && t.vers == vers) return;
  Table t{prog, vers, std::move(name), std::move(proc_names), nullptr};
  t.slots.reset(new ProcSlot[t.proc_names.size()]);
  tables_.push_back(std::move(t));
}

void CallStats::record_call(uint32_t prog, uint32_t vers, uint32_t proc, bool error,
                            std::chrono::microseconds latency, uint64_t request_bytes,
                            uint64_t reply_bytes) {
  for (auto& t : tables_) {
    if (t.prog != prog || t.vers != vers) continue;
    if (proc >= t.proc_names.size()) return;
    ProcSlot& s = t.slots[proc];
    uint64_t us = latency.count() > 0 ? uint64_t(latency.count()) : 0;
    s.calls.fetch_add(1, std::memory_order_relaxed);
    if (error) s.errors.fetch_add(1, std::memory_order_relaxed);
    s.latency_sum_us.fetch_add(us, std::memory_order_relaxed);
    if (request_bytes) s.request_bytes.fetch_add(request_bytes, std::memory_order_relaxed);
    if (reply_bytes) s.reply_bytes.fetch_add(reply_bytes, std::memory_order_relaxed);
    s.buckets[latency_bucket(us)].fetch_add(1, std::memory_order_relaxed);
    return;
  }
}

StatsSnapshot CallStats::snapshot() const {
  StatsSnapshot snap;
  for (const auto& t : tables_) {
    ProgramSnapshot p{t.prog, t.vers, t.name, {}};
    for (size_t i = 0; i < t.proc_names.size(); ++i) {
      const ProcSlot& s = t.slots[i];
      ProcSnapshot ps;
      ps.name = t.proc_names[i];
      ps.calls = s.calls.load(std::memory_order_relaxed);
      ps.errors = s.errors.load(std::memory_order_relaxed);
      ps.latency_sum_us = s.latency_sum_us.load(std::memory_order_relaxed);
      ps.request_bytes = s.request_bytes.load(std::memory_order_relaxed);
      ps.reply_bytes = s.reply_bytes.load(std::memory_order_relaxed);
      for (size_t b = 0; b < kLatencyBuckets; ++b)
        ps.buckets[b] = s.buckets[b].load(std::memory_order_relaxed);
      p.procs.push_back(std::move(ps));
    }
    snap.programs.push_back(std::move(p));
  }
  for (size_t i = 0; i < kTransportCounters; ++i)
    snap.transport[i] = transport_[i].value.load(std::memory_order_relaxed);
  snap.open_connections = open_connections_.load(std::memory_order_relaxed);
  return snap;
}

void CallStats::reset() {
  for (auto& t : tables_) {
    for (size_t i = 0; i < t.proc_names.size(); ++i) {
      ProcSlot& s = t.slots[i];
      s.calls.store(0, std::memory_order_relaxed);
      s.errors.store(0, std::memory_order_relaxed);
      s.latency_sum_us.store(0, std::memory_order_relaxed);
      s.request_bytes.store(0, std::memory_order_relaxed);
      s.reply_bytes.store(0, std::memory_order_relaxed);
      for (auto& b : s.buckets) b.store(0, std::memory_order_relaxed);
    }
  }
  for (auto& c : transport_) c.value.store(0, std::memory_order_relaxed);
}

}  // namespace nasd::rpc
