#include "bench/report_math.h"

#include <gtest/gtest.h>

#include "bench/benchmark.h"

namespace nasd::bench {
namespace {

TEST(OverallResponseTimeTest, HandComputedCurve) {
  // Trapezoids from the origin: 100*(0+1)/2 + 100*(1+2)/2 + 100*(2+4)/2 = 50 + 150 + 300 = 500,
  // divided by the peak of 300 ops/s.
  EXPECT_NEAR(overall_response_time({{100, 1}, {200, 2}, {300, 4}}), 500.0 / 300.0, 1e-12);
}

TEST(OverallResponseTimeTest, FlatCurveIsHalfTheFirstSegmentShort) {
  // Constant 2 ms: the ramp from the origin loses half of the first segment's area.
  // (50*2/2 + 150*2) / 200 = (50 + 300) / 200 = 1.75
  EXPECT_NEAR(overall_response_time({{50, 2}, {200, 2}}), 1.75, 1e-12);
}

TEST(OverallResponseTimeTest, ReproducesPublishedSpecsfs2008Result) {
  // shared/seeds 003: BlueArc Mercury 50, published as 80279 ops/s at 3.42 msec.
  std::vector<CurvePoint> c = {{7991, 1.4},  {16005, 1.7}, {24024, 2.1}, {32039, 2.4}, {40062, 2.9},
                               {48108, 3.4}, {56122, 4.0}, {64124, 5.0}, {72328, 6.3}, {80279, 10.0}};
  EXPECT_NEAR(overall_response_time(c), 3.42, 0.005);
}

TEST(OverallResponseTimeTest, ReproducesPublishedSfs97Result) {
  // shared/seeds 000: 192915 ops/s at 1.72 msec.
  std::vector<CurvePoint> c = {{20205, 0.5},  {40184, 0.8},  {60639, 1.0},  {80887, 1.2},  {101397, 1.5},
                               {121533, 1.8}, {142056, 2.2}, {162632, 2.9}, {182599, 4.0}, {192915, 5.6}};
  EXPECT_NEAR(overall_response_time(c), 1.72, 0.005);
}

TEST(OverallResponseTimeTest, StepsAfterThePeakAreNotOnTheCurve) {
  // The overloaded last step achieves less than the one before and must not add area.
  EXPECT_NEAR(overall_response_time({{100, 1}, {200, 2}, {300, 4}, {250, 40}}), 500.0 / 300.0, 1e-12);
  EXPECT_EQ(peak_index({{100, 1}, {300, 4}, {250, 40}}), 1);
}

TEST(OverallResponseTimeTest, EmptyOrZeroCurve) {
  EXPECT_EQ(overall_response_time({}), 0);
  EXPECT_EQ(overall_response_time({{0, 5}}), 0);
  EXPECT_EQ(peak_index({}), -1);
}

TEST(MissedLoadTest, ToleranceBoundary) {
  EXPECT_FALSE(missed_requested_load(1000, 900, 10));
  EXPECT_TRUE(missed_requested_load(1000, 899.9, 10));
  EXPECT_FALSE(missed_requested_load(1000, 1200, 10));  // overshooting is not missing
  EXPECT_TRUE(missed_requested_load(1000, 999, 0));
}

TEST(SummarizeTest, ThroughputLatencyAndMissedFromStepStats) {
  RunConfig config;
  config.loads = {100, 200};
  config.step_seconds = 10;
  config.tolerance_pct = 10;
  RunResult r;
  r.steps.resize(2);
  // Step 1: 1000 replies of 1 ms in 10 s = 100 ops/s. Step 2: 1500 of 3 ms = 150 ops/s, MISSED.
  for (int i = 0; i < 1000; ++i) r.steps[0].stats.record_reply(OpType::kGetattr, 1000000, 0);
  for (int i = 0; i < 1500; ++i) r.steps[1].stats.record_reply(OpType::kRead, 3000000, 0);
  r.steps[1].stats.record_reply(OpType::kRemove, 5000000, 2);  // NFS3ERR_NOENT: an error, no throughput
  summarize(config, &r);
  EXPECT_DOUBLE_EQ(r.steps[0].achieved_ops, 100);
  EXPECT_FALSE(r.steps[0].missed);
  EXPECT_DOUBLE_EQ(r.steps[1].achieved_ops, 150);
  EXPECT_TRUE(r.steps[1].missed);
  EXPECT_EQ(r.steps[1].errors, 1u);
  EXPECT_NEAR(r.steps[1].mean_ms, 3.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.peak_ops, 150);
  // (100*1/2 + 50*(1+3)/2) / 150 = (50 + 100) / 150 = 1.0
  EXPECT_NEAR(r.overall_response_ms, 1.0, 1e-9);
}

}  // namespace
}  // namespace nasd::bench
