// Merging what the agents of a many-host run measured into one run result, as if one load
// generator had made all their requests: per step the per-procedure counters are added and the
// latency histograms merged bucket by bucket (never averaged), so ops/s and MB/s are sums and
// the mean and percentiles are those of all requests together. Pure: the coordinator gathers
// the records, the tests build them by hand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/benchmark.h"

namespace nasd::bench {

// One agent's report for one step, its clock already mapped onto the coordinator's.
struct AgentStepRecord {
  StepStats stats;
  uint64_t refused = 0;
  std::string failure;          // "" unless a process of the agent lost its connection
  int64_t planned_start_ns = 0; // coordinator clock: when the step's warmup was to begin
  int64_t first_issue_ns = 0;   // coordinator clock: its first request (0: it sent none)
};

struct AgentRecord {
  std::string name, address;
  std::vector<size_t> targets;       // indices into RunConfig::targets
  std::vector<ServerFacts> facts;    // per entry of `targets`
  uint64_t fileset_bytes = 0;
  double build_seconds = 0;
  std::vector<AgentStepRecord> steps;
};

// Fills result->steps, facts (per config target, from the first agent that mounted it),
// fileset_bytes (sum), build_seconds (the slowest agent), refused, failures (named by agent),
// agents and step_start_spread_ms, then summarize()s. Every agent must have one record per step.
void merge_agent_results(const RunConfig& config, const std::vector<AgentRecord>& agents, RunResult* result);

}  // namespace nasd::bench
