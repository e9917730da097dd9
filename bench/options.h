// Command line of `nasd-loadgen run`; see usage() for the options.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "bench/benchmark.h"
#include "bench/report_writer.h"

namespace nasd::bench {

struct Options {
  RunConfig config;
  ReportLabels labels;
  std::string report_path;  // "" = stdout
  std::string csv_path;
  std::string plot_path;
  bool quiet = false;
  bool help = false;
};

struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// `args` excludes the program name and the `run` word. Throws UsageError with a message that
// names the offending option.
Options parse_options(const std::vector<std::string>& args);
std::string usage();

}  // namespace nasd::bench
