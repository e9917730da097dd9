// One CSV row per load step, for plotting and for comparing runs with a script.
// Columns: step,requested_ops,achieved_ops,mean_ms,p50_ms,p99_ms,ok,errors,late_issues,missed,errors_by_op
// (errors_by_op is `OP=n` pairs joined by ';', empty when there were none).
#pragma once

#include <ostream>

#include "bench/benchmark.h"

namespace nasd::bench {

void write_csv(std::ostream& out, const RunResult& result);

}  // namespace nasd::bench
