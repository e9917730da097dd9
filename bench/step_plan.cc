#include "bench/step_plan.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace nasd::bench {

std::vector<double> evenly_spaced_loads(double peak, int steps) {
  if (!(peak > 0) || !std::isfinite(peak)) throw StepPlanError("--load must be a positive rate");
  if (steps < 1) throw StepPlanError("--steps must be at least 1");
  std::vector<double> loads;
  for (int i = 1; i <= steps; ++i) loads.push_back(peak * i / steps);
  return loads;
}

std::vector<double> parse_load_list(const std::string& text) {
  std::vector<double> loads;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(item.c_str(), &end);
    while (end && (*end == ' ' || *end == '\t')) ++end;
    if (item.empty() || *end != '\0' || errno != 0 || !(v > 0) || !std::isfinite(v)) {
      throw StepPlanError("load list item '" + item + "' is not a positive rate");
    }
    loads.push_back(v);
  }
  if (loads.empty()) throw StepPlanError("the load list is empty");
  return loads;
}

Timeline::Timeline(int64_t start_ns, int64_t warmup_ns, int64_t measure_ns, size_t steps)
    : start_ns_(start_ns), warmup_ns_(warmup_ns), measure_ns_(measure_ns), steps_(steps) {}

std::optional<size_t> Timeline::step_at(int64_t t) const {
  if (t < start_ns_ || t >= end()) return std::nullopt;
  return static_cast<size_t>((t - start_ns_) / (warmup_ns_ + measure_ns_));
}

std::optional<size_t> Timeline::measured_step_at(int64_t t) const {
  std::optional<size_t> s = step_at(t);
  if (!s || t < measure_start(*s)) return std::nullopt;
  return s;
}

}  // namespace nasd::bench
