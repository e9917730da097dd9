// Command line of `nasd-loadgen run`; see usage() for the options.
#pragma once

#include <stdexcept>
#include <cstdint>
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
  // A many-host run (bench/coordinator.h): the hosts file and the agent key; "" = one host.
  std::string agents_path;
  std::string agent_key_path;
  std::string coordinator_name = "coordinator";
};

// `nasd-loadgen agent ...` (bench/agent_server.h).
struct AgentOptions {
  std::string host = "0.0.0.0";
  uint16_t port = 7460;
  std::string name;
  std::string key_path;
  size_t sessions = 0;
  bool help = false;
};

struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// `args` excludes the program name and the `run` word. Throws UsageError with a message that
// names the offending option.
Options parse_options(const std::vector<std::string>& args);
std::string usage();
AgentOptions parse_agent_options(const std::vector<std::string>& args);
std::string agent_usage();

}  // namespace nasd::bench
