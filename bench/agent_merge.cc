#include "bench/agent_merge.h"

#include <algorithm>
#include <stdexcept>

namespace nasd::bench {

void merge_agent_results(const RunConfig& config, const std::vector<AgentRecord>& agents, RunResult* result) {
  const size_t steps = config.loads.size();
  result->steps.assign(steps, StepResult{});
  result->facts.assign(config.targets.size(), ServerFacts{});
  std::vector<bool> have_facts(config.targets.size(), false);
  result->fileset_bytes = 0;
  result->build_seconds = 0;
  result->refused = 0;
  result->agents.clear();
  result->step_start_spread_ms.assign(steps, 0);
  std::vector<int64_t> earliest(steps, 0), latest(steps, 0);

  for (const AgentRecord& a : agents) {
    if (a.steps.size() != steps) throw std::invalid_argument("agent " + a.name + " reported the wrong number of steps");
    AgentSummary summary;
    summary.name = a.name;
    summary.address = a.address;
    summary.fileset_bytes = a.fileset_bytes;
    for (size_t j = 0; j < a.targets.size(); ++j) {
      size_t t = a.targets[j];
      if (t >= config.targets.size()) throw std::invalid_argument("agent " + a.name + " has an unknown target");
      summary.targets.push_back(config.targets[t].text);
      if (!have_facts[t] && j < a.facts.size()) {
        result->facts[t] = a.facts[j];
        have_facts[t] = true;
      }
    }
    result->fileset_bytes += a.fileset_bytes;
    result->build_seconds = std::max(result->build_seconds, a.build_seconds);
    for (size_t i = 0; i < steps; ++i) {
      const AgentStepRecord& s = a.steps[i];
      result->steps[i].stats.merge(s.stats);
      result->refused += s.refused;
      if (!s.failure.empty()) {
        std::string f = "load generator " + a.name + ": " + s.failure;
        if (std::find(result->failures.begin(), result->failures.end(), f) == result->failures.end()) {
          result->failures.push_back(f);
        }
      }
      AgentStepSummary st;
      st.ok = s.stats.ok();
      double seconds = config.step_seconds;
      st.achieved_ops = seconds > 0 ? static_cast<double>(st.ok) / seconds : 0;
      st.mb_per_sec = seconds > 0 ? static_cast<double>(s.stats.bytes()) / 1e6 / seconds : 0;
      st.mean_ms = s.stats.latency().mean_ms();
      if (s.first_issue_ns) {
        st.start_offset_ms = static_cast<double>(s.first_issue_ns - s.planned_start_ns) / 1e6;
        if (!earliest[i] || s.first_issue_ns < earliest[i]) earliest[i] = s.first_issue_ns;
        if (!latest[i] || s.first_issue_ns > latest[i]) latest[i] = s.first_issue_ns;
      }
      summary.steps.push_back(st);
    }
    result->agents.push_back(std::move(summary));
  }
  for (size_t i = 0; i < steps; ++i) {
    result->step_start_spread_ms[i] = static_cast<double>(latest[i] - earliest[i]) / 1e6;
  }
  summarize(config, result);
}

}  // namespace nasd::bench
