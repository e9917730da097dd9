#include "bench/report_math.h"

#include <algorithm>

namespace nasd::bench {

int peak_index(const std::vector<CurvePoint>& points) {
  int best = -1;
  for (size_t i = 0; i < points.size(); ++i) {
    if (best < 0 || points[i].ops_per_sec > points[best].ops_per_sec) best = static_cast<int>(i);
  }
  return best;
}

double overall_response_time(std::vector<CurvePoint> points) {
  int peak = peak_index(points);
  if (peak < 0 || points[peak].ops_per_sec <= 0) return 0;
  double peak_ops = points[peak].ops_per_sec;
  points.resize(peak + 1);  // the run ends at its peak; overloaded steps after it are not on the curve
  std::stable_sort(points.begin(), points.end(),
                   [](const CurvePoint& a, const CurvePoint& b) { return a.ops_per_sec < b.ops_per_sec; });
  double area = 0, prev_x = 0, prev_y = 0;
  for (const CurvePoint& p : points) {
    area += (p.ops_per_sec - prev_x) * (p.response_ms + prev_y) / 2.0;
    prev_x = p.ops_per_sec;
    prev_y = p.response_ms;
  }
  return area / peak_ops;
}

bool missed_requested_load(double requested_ops, double achieved_ops, double tolerance_pct) {
  return achieved_ops < requested_ops * (1.0 - tolerance_pct / 100.0);
}

}  // namespace nasd::bench
