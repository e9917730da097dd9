#include "bench/pacing.h"

#include <gtest/gtest.h>

#include <random>

#include "bench/step_plan.h"

namespace nasd::bench {
namespace {

constexpr int64_t kSec = 1000000000;

TEST(PacingTest, RequestsAreEvenlySpacedAtTheRate) {
  PacingSchedule s(5 * kSec, 200, 0);  // one every 5 ms
  EXPECT_EQ(s.due(0), 5 * kSec);
  EXPECT_EQ(s.due(1), 5 * kSec + 5000000);
  EXPECT_EQ(s.due(200), 6 * kSec);
}

TEST(PacingTest, DueByCountsRequestsWhoseTimeHasCome) {
  PacingSchedule s(0, 1000, 0);  // one every 1 ms, the first at 0
  EXPECT_EQ(s.due_by(-1), 0u);
  EXPECT_EQ(s.due_by(0), 1u);
  EXPECT_EQ(s.due_by(999999), 1u);
  EXPECT_EQ(s.due_by(1000000), 2u);
  EXPECT_EQ(s.due_by(kSec), 1001u);
}

TEST(PacingTest, PhaseShiftsTheWholeSchedule) {
  PacingSchedule s(0, 100, 0.5);  // every 10 ms, starting at 5 ms
  EXPECT_EQ(s.due(0), 5000000);
  EXPECT_EQ(s.due_by(4999999), 0u);
  EXPECT_EQ(s.due_by(5000000), 1u);
  EXPECT_EQ(s.due_by(15000000), 2u);
}

TEST(PacingTest, ZeroRateIsNeverDue) {
  PacingSchedule s(0, 0, 0);
  EXPECT_EQ(s.due_by(100 * kSec), 0u);
}

TEST(PacingTest, DueByAgreesWithDueAtRandomTimesAndOddRates) {
  std::mt19937_64 rng(9);
  for (double rate : {1.0, 3.3, 333.0, 12345.6, 99999.0}) {
    PacingSchedule s(kSec, rate, 0.37);
    for (int i = 0; i < 2000; ++i) {
      int64_t t = kSec + static_cast<int64_t>(rng() % (20 * kSec));
      uint64_t n = s.due_by(t);
      if (n > 0) {
        EXPECT_LE(s.due(n - 1), t) << rate;
      }
      EXPECT_GT(s.due(n), t) << rate;
    }
  }
}

TEST(PacingTest, OfferedLoadOverAStepMatchesTheRate) {
  // Open loop: over 10 s at 250/s exactly 2500 requests come due, whatever the replies do.
  PacingSchedule s(0, 250, 0.25);
  EXPECT_EQ(s.due_by(10 * kSec - 1), 2500u);
}

TEST(StepPlanTest, EvenlySpacedLoads) {
  std::vector<double> l = evenly_spaced_loads(1000, 10);
  ASSERT_EQ(l.size(), 10u);
  EXPECT_DOUBLE_EQ(l.front(), 100);
  EXPECT_DOUBLE_EQ(l[4], 500);
  EXPECT_DOUBLE_EQ(l.back(), 1000);
  EXPECT_THROW(evenly_spaced_loads(1000, 0), StepPlanError);
  EXPECT_THROW(evenly_spaced_loads(-5, 3), StepPlanError);
}

TEST(StepPlanTest, LoadList) {
  EXPECT_EQ(parse_load_list("100,250.5, 400"), (std::vector<double>{100, 250.5, 400}));
  EXPECT_THROW(parse_load_list(""), StepPlanError);
  EXPECT_THROW(parse_load_list("100,,200"), StepPlanError);
  EXPECT_THROW(parse_load_list("100,x"), StepPlanError);
  EXPECT_THROW(parse_load_list("100,0"), StepPlanError);
}

TEST(TimelineTest, StepsAreWarmupThenMeasurement) {
  Timeline t(10 * kSec, 2 * kSec, 5 * kSec, 3);  // steps of 7 s from t = 10 s
  EXPECT_EQ(t.end(), 31 * kSec);
  EXPECT_FALSE(t.step_at(10 * kSec - 1));
  EXPECT_EQ(t.step_at(10 * kSec), 0u);
  EXPECT_FALSE(t.measured_step_at(12 * kSec - 1));  // still warming up
  EXPECT_EQ(t.measured_step_at(12 * kSec), 0u);
  EXPECT_EQ(t.step_at(17 * kSec), 1u);
  EXPECT_FALSE(t.measured_step_at(17 * kSec));
  EXPECT_EQ(t.measured_step_at(31 * kSec - 1), 2u);
  EXPECT_FALSE(t.step_at(31 * kSec));
  EXPECT_DOUBLE_EQ(t.measure_seconds(), 5.0);
}

}  // namespace
}  // namespace nasd::bench
