#include "nvram/stats.h"

#include <bit>

namespace nasd::nvram {

void LatencyHistogram::add(uint64_t micros) {
  size_t b = micros == 0 ? 0 : std::bit_width(micros);
  if (b >= kBuckets) b = kBuckets - 1;
  buckets_[b].fetch_add(1, std::memory_order_relaxed);
  sum_us_.fetch_add(micros, std::memory_order_relaxed);
}

uint64_t LatencyHistogram::count() const {
  uint64_t n = 0;
  for (const auto& b : buckets_) n += b.load(std::memory_order_relaxed);
  return n;
}

uint64_t LatencyHistogram::percentile_upper_us(double p) const {
  uint64_t total = count();
  if (total == 0) return 0;
  auto want = static_cast<uint64_t>(static_cast<double>(total) * p / 100.0 + 0.999999);
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += buckets_[i].load(std::memory_order_relaxed);
    if (seen >= want) return uint64_t(1) << i;
  }
  return uint64_t(1) << (kBuckets - 1);
}

std::string LatencyHistogram::summary() const {
  return "n=" + std::to_string(count()) + " p50<=" + std::to_string(percentile_upper_us(50)) +
         "us p99<=" + std::to_string(percentile_upper_us(99)) +
         "us max<=" + std::to_string(percentile_upper_us(100)) + "us";
}

}  // namespace nasd::nvram
