#include "bench/histogram.h"

#include <gtest/gtest.h>

#include "bench/stats.h"

namespace nasd::bench {
namespace {

TEST(HistogramTest, BucketsCoverEveryValueWithBoundedWidth) {
  for (uint64_t us : {0ull, 1ull, 63ull, 64ull, 65ull, 127ull, 128ull, 1000ull, 123456ull, 98765432ull}) {
    size_t b = LatencyHistogram::bucket_of(us);
    EXPECT_LE(LatencyHistogram::bucket_low(b), us);
    EXPECT_GE(LatencyHistogram::bucket_high(b), us);
    double width = static_cast<double>(LatencyHistogram::bucket_high(b) - LatencyHistogram::bucket_low(b) + 1);
    if (us < 64) {
      EXPECT_EQ(width, 1) << us;  // exact microseconds
    } else {
      EXPECT_LE(width / static_cast<double>(us), 1.0 / 32 + 1e-9) << us;
    }
  }
  // Buckets are contiguous: each starts right after the previous one ends.
  for (size_t b = 1; b < 500; ++b) {
    EXPECT_EQ(LatencyHistogram::bucket_low(b), LatencyHistogram::bucket_high(b - 1) + 1) << b;
  }
}

TEST(HistogramTest, MeanIsExactAndPercentilesAreClose) {
  LatencyHistogram h;
  for (int us = 1; us <= 1000; ++us) h.record_ns(us * 1000LL);
  EXPECT_EQ(h.count(), 1000u);
  EXPECT_NEAR(h.mean_ms(), 0.5005, 1e-9);
  EXPECT_NEAR(h.percentile_ms(50), 0.500, 0.500 * 0.03);
  EXPECT_NEAR(h.percentile_ms(99), 0.990, 0.990 * 0.03);
  EXPECT_NEAR(h.percentile_ms(100), 1.0, 1e-9);  // clamped to the exact max
  EXPECT_NEAR(h.max_ms(), 1.0, 1e-12);
}

TEST(HistogramTest, SkewedDistributionTail) {
  LatencyHistogram h;
  for (int i = 0; i < 990; ++i) h.record_ns(200000);   // 0.2 ms
  for (int i = 0; i < 10; ++i) h.record_ns(50000000);  // 50 ms
  EXPECT_NEAR(h.percentile_ms(50), 0.2, 0.2 * 0.03);
  EXPECT_NEAR(h.percentile_ms(99), 0.2, 0.2 * 0.03);
  EXPECT_NEAR(h.percentile_ms(99.5), 50, 50 * 0.03);
}

TEST(HistogramTest, MergeAddsUp) {
  LatencyHistogram a, b;
  a.record_ns(1000000);
  b.record_ns(3000000);
  b.record_ns(5000000);
  a.merge(b);
  EXPECT_EQ(a.count(), 3u);
  EXPECT_NEAR(a.mean_ms(), 3.0, 1e-9);
  EXPECT_NEAR(a.max_ms(), 5.0, 1e-12);
}

TEST(HistogramTest, EmptyIsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.mean_ms(), 0);
  EXPECT_EQ(h.percentile_ms(99), 0);
}

TEST(StepStatsTest, ErrorsAreCountedByStatusAndKeptOutOfLatency) {
  StepStats s;
  s.record_reply(OpType::kLookup, 1000000, 0);
  s.record_reply(OpType::kLookup, 9000000, 2);
  s.record_reply(OpType::kRemove, 9000000, 2);
  s.record_reply(OpType::kRemove, 9000000, kRpcFailure);
  EXPECT_EQ(s.ok(), 1u);
  EXPECT_EQ(s.errors(), 3u);
  EXPECT_EQ(s.per_op[index_of(OpType::kRemove)].errors_by_status.at(kRpcFailure), 1u);
  EXPECT_NEAR(s.latency().mean_ms(), 1.0, 1e-9);
  StepStats t;
  t.merge(s);
  t.merge(s);
  EXPECT_EQ(t.per_op[index_of(OpType::kLookup)].errors_by_status.at(2), 2u);
}

}  // namespace
}  // namespace nasd::bench
