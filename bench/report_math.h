// The arithmetic of a SPECsfs-style result: the peak, the overall response time, MISSED steps.
#pragma once

#include <vector>

namespace nasd::bench {

struct CurvePoint {
  double ops_per_sec;   // achieved throughput of a step
  double response_ms;   // mean response time of that step
};

// SPEC's overall response time condenses the whole curve into one number: the area under the
// response-time-versus-throughput curve, divided by the peak throughput, which is the mean
// response time weighted evenly over the load range. The curve is the straight-line joins of the
// reported points, starting from the origin (0 ops/s, 0 ms), and ends at the peak point. (This is
// how the SPECsfs97_R1/SPECsfs2008/SPEC SFS 2014 run rules describe it; the seeds in
// shared/seeds reproduce their published values with exactly this rule.)
// Points are given in run order; those after the peak step are not part of the curve, the rest
// are joined in order of throughput.
// Returns 0 for an empty curve or a zero peak.
double overall_response_time(std::vector<CurvePoint> points);

// Index of the highest-throughput point (first one on ties); -1 when empty.
int peak_index(const std::vector<CurvePoint>& points);

// A step missed its requested load when it achieved less than (100 - tolerance_pct)% of it.
bool missed_requested_load(double requested_ops, double achieved_ops, double tolerance_pct);

}  // namespace nasd::bench
