#include "bench/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace nasd::bench {

namespace {
constexpr int kSubBits = 5;                       // 32 sub-buckets per power of two
constexpr uint64_t kSub = uint64_t{1} << kSubBits;
constexpr uint64_t kLinearLimit = 2 * kSub;       // values below this get a bucket each
constexpr int kMaxShift = 40;                     // 2^45 us ~ a year: nothing real is larger
constexpr size_t kBucketCount = kLinearLimit + kMaxShift * kSub;
}  // namespace

LatencyHistogram::LatencyHistogram() : buckets_(kBucketCount, 0) {}

size_t LatencyHistogram::bucket_of(uint64_t micros) {
  if (micros < kLinearLimit) return static_cast<size_t>(micros);
  int msb = 63 - std::countl_zero(micros);
  int shift = msb - kSubBits;  // >= 1 here
  if (shift > kMaxShift) return kBucketCount - 1;
  uint64_t top = micros >> shift;  // in [kSub, 2*kSub)
  return static_cast<size_t>(kLinearLimit + (shift - 1) * kSub + (top - kSub));
}

uint64_t LatencyHistogram::bucket_low(size_t bucket) {
  if (bucket < kLinearLimit) return bucket;
  uint64_t rel = bucket - kLinearLimit;
  int shift = static_cast<int>(rel / kSub) + 1;
  uint64_t top = kSub + rel % kSub;
  return top << shift;
}

uint64_t LatencyHistogram::bucket_high(size_t bucket) {
  if (bucket < kLinearLimit) return bucket;
  uint64_t rel = bucket - kLinearLimit;
  int shift = static_cast<int>(rel / kSub) + 1;
  uint64_t top = kSub + rel % kSub;
  return ((top + 1) << shift) - 1;
}

void LatencyHistogram::record_ns(int64_t latency_ns) {
  if (latency_ns < 0) latency_ns = 0;
  ++buckets_[bucket_of(static_cast<uint64_t>(latency_ns) / 1000)];
  if (count_ == 0 || latency_ns < min_ns_) min_ns_ = latency_ns;
  if (count_ == 0 || latency_ns > max_ns_) max_ns_ = latency_ns;
  ++count_;
  sum_ns_ += latency_ns;
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  if (other.count_ == 0) return;
  for (size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  if (count_ == 0 || other.min_ns_ < min_ns_) min_ns_ = other.min_ns_;
  if (count_ == 0 || other.max_ns_ > max_ns_) max_ns_ = other.max_ns_;
  count_ += other.count_;
  sum_ns_ += other.sum_ns_;
}

size_t LatencyHistogram::bucket_count() { return kBucketCount; }

LatencyHistogram::Parts LatencyHistogram::parts() const {
  Parts p;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    if (buckets_[i]) p.buckets.emplace_back(static_cast<uint32_t>(i), buckets_[i]);
  }
  p.count = count_;
  p.sum_ns = static_cast<uint64_t>(sum_ns_);
  p.min_ns = min_ns_;
  p.max_ns = max_ns_;
  return p;
}

bool LatencyHistogram::restore(const Parts& p) {
  uint64_t total = 0;
  int64_t last = -1;
  for (const auto& [index, n] : p.buckets) {
    if (index >= kBucketCount || static_cast<int64_t>(index) <= last || n == 0) return false;
    if (total + n < total) return false;  // overflow
    total += n;
    last = index;
  }
  if (total != p.count) return false;
  if (p.count > 0 && (p.min_ns < 0 || p.min_ns > p.max_ns)) return false;
  if (p.count == 0 && (p.min_ns != 0 || p.max_ns != 0 || p.sum_ns != 0)) return false;
  std::fill(buckets_.begin(), buckets_.end(), 0);
  for (const auto& [index, n] : p.buckets) buckets_[index] = n;
  count_ = p.count;
  sum_ns_ = static_cast<long double>(p.sum_ns);
  min_ns_ = p.min_ns;
  max_ns_ = p.max_ns;
  return true;
}

double LatencyHistogram::mean_ms() const {
  if (count_ == 0) return 0;
  return static_cast<double>(sum_ns_ / count_) / 1e6;
}

double LatencyHistogram::percentile_ms(double p) const {
  if (count_ == 0) return 0;
  p = std::clamp(p, 0.0, 100.0);
  auto rank = static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    seen += buckets_[i];
    if (seen >= rank) {
      double mid_us = (static_cast<double>(bucket_low(i)) + static_cast<double>(bucket_high(i)) + 1) / 2.0;
      double mid_ns = std::clamp(mid_us * 1000.0, static_cast<double>(min_ns_), static_cast<double>(max_ns_));
      return mid_ns / 1e6;
    }
  }
  return max_ms();
}

}  // namespace nasd::bench
