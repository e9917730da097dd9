// Latency histogram with bounded relative error: exact below 64 us, then 32 buckets per
// power of two (at most ~3% error), up to hours. Fixed memory, cheap to record, mergeable, so
// every worker keeps its own and they are added up after the run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace nasd::bench {

class LatencyHistogram {
 public:
  LatencyHistogram();

  void record_ns(int64_t latency_ns);
  void merge(const LatencyHistogram& other);

  uint64_t count() const { return count_; }
  // Exact mean of the recorded values, in milliseconds (0 when empty).
  double mean_ms() const;
  // Value at percentile `p` in (0, 100], in milliseconds: the midpoint of the bucket holding the
  // ceil(p% * count)-th smallest value, clamped to the exact min and max. 0 when empty.
  double percentile_ms(double p) const;
  double max_ms() const { return static_cast<double>(max_ns_) / 1e6; }

  // The whole state, for sending a histogram to another process (bench/agent_protocol.h): the
  // non-empty buckets in increasing index order, the count, the sum, the exact min and max.
  struct Parts {
    std::vector<std::pair<uint32_t, uint64_t>> buckets;  // (index, count), count > 0
    uint64_t count = 0;
    uint64_t sum_ns = 0;
    int64_t min_ns = 0, max_ns = 0;
  };
  Parts parts() const;
  // Rebuilds the histogram from `parts`. False (and *this unchanged) unless they describe one:
  // indices in range and increasing, counts adding up to `count`, 0 <= min <= max.
  bool restore(const Parts& parts);
  static size_t bucket_count();

  // Bucket arithmetic, exposed for tests.
  static size_t bucket_of(uint64_t micros);
  static uint64_t bucket_low(size_t bucket);
  static uint64_t bucket_high(size_t bucket);

 private:
  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0;
  long double sum_ns_ = 0;
  int64_t min_ns_ = 0, max_ns_ = 0;
};

}  // namespace nasd::bench
