#include "bench/pacing.h"

#include <cmath>
#include <limits>

namespace nasd::bench {

PacingSchedule::PacingSchedule(int64_t start_ns, double rate, double phase)
    : start_ns_(start_ns), rate_(rate > 0 ? rate : 0), phase_(phase) {}

int64_t PacingSchedule::due(uint64_t k) const {
  if (rate_ <= 0) return std::numeric_limits<int64_t>::max();
  return start_ns_ + static_cast<int64_t>(std::llround((static_cast<double>(k) + phase_) * 1e9 / rate_));
}

uint64_t PacingSchedule::due_by(int64_t now_ns) const {
  if (rate_ <= 0 || now_ns < start_ns_) return 0;
  double elapsed_s = static_cast<double>(now_ns - start_ns_) / 1e9;
  double issued = std::floor(elapsed_s * rate_ - phase_) + 1;
  if (issued <= 0) return 0;
  auto n = static_cast<uint64_t>(issued);
  // Floating point may put the boundary one request off; settle it with the exact due times.
  while (n > 0 && due(n - 1) > now_ns) --n;
  while (due(n) <= now_ns) ++n;
  return n;
}

}  // namespace nasd::bench
