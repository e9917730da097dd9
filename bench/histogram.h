// Latency histogram with bounded relative error: exact below 64 us, then 32 buckets per
// power of two (at most ~3% error), up to hours. Fixed memory, cheap to record, mergeable, so
// every worker keeps its own and they are added up after the run.
#pragma once

#include <cstddef>
#include <cstdint>
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
