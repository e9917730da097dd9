// Counters the journal keeps for `status()` and the admin command.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace nasd::nvram {

// Latencies in power-of-two microsecond buckets: bucket i holds [2^(i-1), 2^i) us.
class LatencyHistogram {
 public:
  static constexpr size_t kBuckets = 32;
  void add(uint64_t micros);
  uint64_t count() const;
  // Upper bound of the bucket holding the p-th percentile (0 < p <= 100), 0 when empty.
  uint64_t percentile_upper_us(double p) const;
  // "n=120 p50<=16us p99<=512us max<=1024us"
  std::string summary() const;
  // For exporters (Prometheus): the samples in bucket i, and the sum of all samples.
  uint64_t bucket(size_t i) const { return buckets_[i].load(std::memory_order_relaxed); }
  uint64_t sum_us() const { return sum_us_.load(std::memory_order_relaxed); }

 private:
  std::array<std::atomic<uint64_t>, kBuckets> buckets_{};
  std::atomic<uint64_t> sum_us_{0};
};

struct JournalStats {
  // Fill level.
  uint64_t log_bytes = 0, used_bytes = 0, live_records = 0;
  // Group commit.
  uint64_t appends = 0, commits = 0, records_committed = 0, max_group = 0;
  // Stable calls answered without a thread waiting: on the event loop (try_committed), and by
  // the committer thread's callback (when_committed).
  uint64_t loop_commit_answers = 0, commit_callbacks = 0;
  // Write-behind and back-pressure.
  uint64_t fs_flushes = 0, trims = 0, records_trimmed = 0, space_waits = 0, space_timeouts = 0;
  // Recovery.
  uint64_t records_recovered = 0, records_replayed = 0, replay_errors = 0;
  // Mirror.
  bool mirror_configured = false, mirror_connected = false, degraded = false;
  uint64_t mirror_acked_pos = 0, mirror_lag_bytes = 0, mirror_acks = 0, mirror_losses = 0;
  // Commits answered JUKEBOX because the unmirrored gate (unmirrored_gate.h) refused them.
  uint64_t unmirrored_refusals = 0;
};

}  // namespace nasd::nvram
