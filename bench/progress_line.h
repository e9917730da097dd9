// The one-line status written to stderr about once a second while the load runs.
#pragma once

#include <string>

#include "bench/benchmark.h"

namespace nasd::bench {

// e.g. "step 3/10 300 ops/s requested  12.0/350.0 s  achieved 298.4 ops/s  mean 0.52 ms  errors 0"
std::string format_progress(const Progress& p);

}  // namespace nasd::bench
