#include "bench/coordinator.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "bench/agent_channel.h"
#include "bench/agent_merge.h"
#include "bench/agent_protocol.h"
#include "bench/clock.h"

namespace nasd::bench {

namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr int kClockProbes = 5;
constexpr int64_t kMinLeadNs = 300000000;  // a step starts at least 300 ms after it is sent

struct Agent {
  AgentHost host;
  std::unique_ptr<agent::Channel> channel;
  AgentRecord record;
  uint64_t per_target_bytes = 0;
  int64_t clock_offset_ns = 0;  // agent clock minus coordinator clock
};

std::string local_time_now() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a %b %d %H:%M:%S %Y", std::localtime(&t));
  return buf;
}

// Runs `fn` for every agent on its own thread; the first failure is thrown as RunError.
void for_each_agent(std::vector<Agent>& agents, const std::function<void(Agent&)>& fn) {
  std::mutex mu;
  std::string first_error;
  std::vector<std::thread> threads;
  for (Agent& a : agents) {
    threads.emplace_back([&, ap = &a] {
      try {
        fn(*ap);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.empty()) first_error = e.what();
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.empty()) first_error = "load generator " + ap->host.name + ": unexpected error";
      }
    });
  }
  for (auto& t : threads) t.join();
  if (!first_error.empty()) throw RunError(first_error);
}

// One request and its reply; an Error reply, a lost connection or a reply of another type
// is a RunError naming the agent.
template <typename Reply>
Reply call(Agent& a, const std::vector<uint8_t>& request, agent::MessageType expect, milliseconds timeout) {
  const std::string who = "load generator " + a.host.name + " (" + a.host.address() + ")";
  std::string error;
  if (!a.channel->send(request, &error)) throw RunError(who + ": " + error);
  std::vector<uint8_t> reply;
  util::ReadStatus st = a.channel->receive(&reply, timeout, &error);
  if (st == util::ReadStatus::Timeout) throw RunError(who + ": no answer within " + std::to_string(timeout.count()) + " ms");
  if (st != util::ReadStatus::Ok) throw RunError(who + ": " + error);
  agent::MessageType type;
  if (!agent::peek_type(reply, &type)) throw RunError(who + ": unknown reply");
  if (type == agent::MessageType::kError) {
    agent::Error e;
    if (!agent::decode(reply, &e, &error)) throw RunError(who + ": malformed error reply: " + error);
    throw RunError(who + ": " + e.message);
  }
  if (type != expect) throw RunError(who + ": unexpected reply type " + std::to_string(static_cast<int>(type)));
  Reply out;
  if (!agent::decode(reply, &out, &error)) throw RunError(who + ": malformed reply: " + error);
  return out;
}

// NTP-style: the agent's clock read halfway through the probe with the shortest round trip.
void measure_clock(Agent& a, milliseconds timeout, int64_t* max_rtt_ns) {
  int64_t best_rtt = -1;
  for (int i = 0; i < kClockProbes; ++i) {
    const uint64_t nonce = static_cast<uint64_t>(monotonic_ns()) ^ (static_cast<uint64_t>(i) << 56);
    const int64_t t0 = monotonic_ns();
    auto r = call<agent::ClockReply>(a, agent::encode(agent::ClockProbe{nonce}), agent::MessageType::kClockReply, timeout);
    const int64_t t2 = monotonic_ns();
    if (r.nonce != nonce) throw RunError("load generator " + a.host.name + ": clock reply to another probe");
    if (best_rtt < 0 || t2 - t0 < best_rtt) {
      best_rtt = t2 - t0;
      a.clock_offset_ns = r.agent_now_ns - (t0 + (t2 - t0) / 2);
    }
  }
  *max_rtt_ns = std::max(*max_rtt_ns, best_rtt);
}

}  // namespace

RunResult run_distributed(const RunConfig& config, const std::vector<AgentHost>& hosts,
                          const link::Credentials& credentials, const ProgressFn& progress) {
  if (config.targets.empty()) throw RunError("no targets");
  if (config.loads.empty()) throw RunError("no load steps");
  if (hosts.empty()) throw RunError("no load generators");
  RunResult result;
  result.started_at = local_time_now();
  const milliseconds nfs_timeout(config.timeout_ms);

  std::vector<Agent> agents(hosts.size());
  const auto assignment = assign_targets(config.targets.size(), hosts.size());
  for (size_t k = 0; k < hosts.size(); ++k) {
    agents[k].host = hosts[k];
    agents[k].record.name = hosts[k].name;
    agents[k].record.address = hosts[k].address();
    agents[k].record.targets = assignment[k];
  }
  const double total_processes = static_cast<double>(config.processes * hosts.size());
  const double agent_share = static_cast<double>(config.processes) / total_processes;
  const double peak = *std::max_element(config.loads.begin(), config.loads.end());

  // 1-2. Connect, authenticate, prepare.
  for_each_agent(agents, [&](Agent& a) {
    std::string error;
    a.channel = agent::connect_agent(a.host.host, a.host.port, a.host.name, credentials, 10s, &error);
    if (!a.channel) throw RunError("load generator " + a.host.name + ": " + error);
    agent::Prepare p;
    p.agent_index = static_cast<uint32_t>(&a - agents.data());
    p.agents = static_cast<uint32_t>(agents.size());
    for (size_t t : a.record.targets) p.targets.push_back(config.targets[t].text);
    p.workdir = config.workdir + "." + a.host.name;
    p.processes = static_cast<uint32_t>(config.processes);
    p.max_in_flight = static_cast<uint32_t>(config.max_in_flight);
    p.io_size = config.io_size;
    p.timeout_ms = static_cast<uint32_t>(config.timeout_ms);
    p.seed = config.seed + 1000003ull * p.agent_index;  // no two agents draw the same requests
    p.mix_name = config.mix.name();
    for (OpType op : kAllOpTypes) p.mix_percent[index_of(op)] = config.mix.percent(op);
    p.files_per_dir = static_cast<uint32_t>(config.files_per_dir);
    p.mib_per_op = config.mib_per_op;
    p.peak_ops = peak * agent_share;
    p.file_sizes = config.file_sizes;
    auto prepared = call<agent::Prepared>(a, agent::encode(p), agent::MessageType::kPrepared,
                                          nfs_timeout * 3 + 30s);
    if (prepared.facts.size() != a.record.targets.size()) {
      throw RunError("load generator " + a.host.name + ": FSSTAT for the wrong number of targets");
    }
    a.record.facts = prepared.facts;
    a.per_target_bytes = prepared.fileset_bytes_per_target;
  });

  // 3. Does everything every agent will create on a target fit there?
  std::vector<uint64_t> need(config.targets.size(), 0);
  std::vector<ServerFacts> facts(config.targets.size());
  for (const Agent& a : agents) {
    for (size_t j = 0; j < a.record.targets.size(); ++j) {
      need[a.record.targets[j]] += a.per_target_bytes;
      facts[a.record.targets[j]] = a.record.facts[j];
    }
  }
  for (size_t t = 0; t < config.targets.size(); ++t) {
    if (need[t] == 0) continue;
    std::string no_room = check_fileset_fits({config.targets[t]}, {facts[t]}, need[t]);
    if (!no_room.empty()) throw RunError(no_room + " (all load generators on it together)");
  }
  result.transfer_bytes = config.io_size;
  for (const ServerFacts& f : facts) {
    if (f.rtmax) result.transfer_bytes = std::min(result.transfer_bytes, f.rtmax);
    if (f.wtmax) result.transfer_bytes = std::min(result.transfer_bytes, f.wtmax);
  }
  FilesetParams fp;  // agent 0's share, for the report's layout line
  fp.peak_ops = peak * agent_share;
  fp.mib_per_op = config.mib_per_op;
  fp.workers = config.processes;
  fp.targets = agents[0].record.targets.size();
  fp.files_per_dir = config.files_per_dir;
  fp.seed = config.seed;
  fp.file_sizes = config.file_sizes;
  result.shape = plan_fileset(fp);

  // 4. Build.
  for_each_agent(agents, [&](Agent& a) {
    auto built = call<agent::Built>(a, agent::encode_build(), agent::MessageType::kBuilt, milliseconds(6h));
    a.record.fileset_bytes = built.fileset_bytes;
    a.record.build_seconds = built.build_seconds;
  });

  // 5. The steps, each one a barrier.
  auto ns = [](double s) { return static_cast<int64_t>(s * 1e9); };
  const int64_t warmup_ns = ns(config.warmup_seconds), measure_ns = ns(config.step_seconds);
  for (size_t i = 0; i < config.loads.size(); ++i) {
    int64_t max_rtt = 0;
    for (Agent& a : agents) measure_clock(a, nfs_timeout + 10s, &max_rtt);
    const int64_t start = monotonic_ns() + std::max(kMinLeadNs, 10 * max_rtt) +
                          static_cast<int64_t>(agents.size()) * 2 * max_rtt;
    for (Agent& a : agents) {
      agent::Step s;
      s.index = static_cast<uint32_t>(i);
      s.start_ns = start + a.clock_offset_ns;
      s.warmup_ns = warmup_ns;
      s.measure_ns = measure_ns;
      s.ops_per_sec = config.loads[i] * agent_share;
      std::string error;
      if (!a.channel->send(agent::encode(s), &error)) {
        throw RunError("load generator " + a.host.name + ": " + error);
      }
    }
    const int64_t step_end = start + warmup_ns + measure_ns;
    for_each_agent(agents, [&](Agent& a) {
      const int64_t left = step_end - monotonic_ns();
      const milliseconds wait = milliseconds(std::max<int64_t>(0, left / 1000000)) + nfs_timeout + 60s;
      std::string error;
      std::vector<uint8_t> reply;
      const std::string who = "load generator " + a.host.name;
      util::ReadStatus st = a.channel->receive(&reply, wait, &error);
      if (st != util::ReadStatus::Ok) throw RunError(who + ": step " + std::to_string(i + 1) + ": " + error);
      agent::MessageType type;
      if (agent::peek_type(reply, &type) && type == agent::MessageType::kError) {
        agent::Error e;
        throw RunError(who + ": " + (agent::decode(reply, &e, &error) ? e.message : "malformed error"));
      }
      agent::StepDone done;
      if (!agent::decode(reply, &done, &error)) throw RunError(who + ": malformed step result: " + error);
      if (done.index != i) throw RunError(who + ": result of step " + std::to_string(done.index) + " for " + std::to_string(i));
      AgentStepRecord r;
      r.stats = done.stats;
      r.refused = done.refused;
      r.failure = done.failure;
      r.planned_start_ns = start;
      r.first_issue_ns = done.first_issue_ns ? done.first_issue_ns - a.clock_offset_ns : 0;
      a.record.steps.push_back(std::move(r));
    });
    if (progress) {
      Progress p;
      p.step = i + 1;
      p.steps = config.loads.size();
      p.requested_ops = config.loads[i];
      const double per_step = config.warmup_seconds + config.step_seconds;
      p.elapsed_s = per_step * static_cast<double>(i + 1);
      p.total_s = per_step * static_cast<double>(config.loads.size());
      uint64_t ok = 0, errors = 0;
      LatencyHistogram all;
      for (const Agent& a : agents) {
        ok += a.record.steps.back().stats.ok();
        errors += a.record.steps.back().stats.errors();
        all.merge(a.record.steps.back().stats.latency());
      }
      p.achieved_ops = config.step_seconds > 0 ? static_cast<double>(ok) / config.step_seconds : 0;
      p.mean_ms = all.mean_ms();
      p.errors = errors;
      progress(p);
    }
  }

  // 6. Finish, merge.
  std::mutex mu;
  for_each_agent(agents, [&](Agent& a) {
    auto finished = call<agent::Finished>(a, agent::encode(agent::Finish{config.cleanup}),
                                          agent::MessageType::kFinished, milliseconds(6h));
    if (!finished.cleanup_error.empty()) {
      std::lock_guard<std::mutex> lock(mu);
      result.cleanup_error += (result.cleanup_error.empty() ? "" : "; ") + a.host.name + ": " + finished.cleanup_error;
    }
  });
  std::vector<AgentRecord> records;
  for (Agent& a : agents) records.push_back(std::move(a.record));
  merge_agent_results(config, records, &result);
  return result;
}

}  // namespace nasd::bench
