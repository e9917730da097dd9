// The requested load steps of a run and the timeline they run on: every step is a warmup
// followed by a measured interval, and all workers share one timeline so no coordination is
// needed while the load runs.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nasd::bench {

// `--load 1000 --steps 10`: 100, 200, ..., 1000 ops/s.
std::vector<double> evenly_spaced_loads(double peak, int steps);
// `--loads 100,250,400`: explicit requested rates; each must be a positive number.
std::vector<double> parse_load_list(const std::string& text);

struct StepPlanError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

class Timeline {
 public:
  Timeline(int64_t start_ns, int64_t warmup_ns, int64_t measure_ns, size_t steps);

  size_t steps() const { return steps_; }
  int64_t step_start(size_t step) const { return start_ns_ + static_cast<int64_t>(step) * (warmup_ns_ + measure_ns_); }
  int64_t measure_start(size_t step) const { return step_start(step) + warmup_ns_; }
  int64_t step_end(size_t step) const { return step_start(step + 1); }
  int64_t end() const { return step_start(steps_); }
  double measure_seconds() const { return static_cast<double>(measure_ns_) / 1e9; }
  // Step whose [start, end) holds `t`; nullopt before the start or after the end.
  std::optional<size_t> step_at(int64_t t) const;
  // Step whose measured interval holds `t` (warmups excluded).
  std::optional<size_t> measured_step_at(int64_t t) const;

 private:
  int64_t start_ns_, warmup_ns_, measure_ns_;
  size_t steps_;
};

}  // namespace nasd::bench
