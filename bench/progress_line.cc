#include "bench/progress_line.h"

#include <cstdio>

namespace nasd::bench {

std::string format_progress(const Progress& p) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "step %zu/%zu %.0f ops/s requested%s  %.1f/%.1f s  achieved %.1f ops/s  mean %.2f ms  errors %llu",
                p.step, p.steps, p.requested_ops, p.warmup ? " (warmup)" : "", p.elapsed_s, p.total_s,
                p.achieved_ops, p.mean_ms, static_cast<unsigned long long>(p.errors));
  return buf;
}

}  // namespace nasd::bench
