#include "bench/agent_session.h"

#include <algorithm>
#include <thread>

#include "bench/clock.h"
#include "bench/mix.h"
#include "bench/step_plan.h"
#include "bench/target.h"
#include "bench/worker_threads.h"
#include "util/log.h"

namespace nasd::bench::agent {

namespace {

constexpr int64_t kLateStartNs = 100000000;          // a step that arrives 100 ms late is refused
constexpr int64_t kFarStartNs = int64_t{3600} * 1000000000;  // ... and one more than an hour ahead

std::vector<uint8_t> error_reply(const std::string& message) { return encode(Error{message}); }

}  // namespace

AgentSession::~AgentSession() {
  workers_.clear();  // closes every connection to the targets
}

std::vector<uint8_t> AgentSession::handle(std::span<const uint8_t> request, bool* close) {
  *close = false;
  MessageType type;
  std::string error;
  try {
    if (!peek_type(request, &type)) {
      *close = true;
      return error_reply("unknown message type");
    }
    switch (type) {
      case MessageType::kPrepare: {
        Prepare m;
        if (!decode(request, &m, &error)) break;
        if (state_ != State::kNew) {
          *close = true;
          return error_reply("Prepare out of order");
        }
        auto reply = on_prepare(m);
        *close = state_ != State::kPrepared;
        return reply;
      }
      case MessageType::kBuild: {
        if (!decode_build(request, &error)) break;
        if (state_ != State::kPrepared) {
          *close = true;
          return error_reply("Build out of order");
        }
        auto reply = on_build();
        *close = state_ != State::kBuilt;
        return reply;
      }
      case MessageType::kClockProbe: {
        ClockProbe m;
        if (!decode(request, &m, &error)) break;
        return encode(ClockReply{m.nonce, monotonic_ns()});
      }
      case MessageType::kStep: {
        Step m;
        if (!decode(request, &m, &error)) break;
        if (state_ != State::kBuilt || m.index != next_step_) {
          *close = true;
          return error_reply("Step " + std::to_string(m.index) + " out of order");
        }
        return on_step(m);
      }
      case MessageType::kFinish: {
        Finish m;
        if (!decode(request, &m, &error)) break;
        *close = true;
        if (state_ != State::kBuilt) return error_reply("Finish out of order");
        return on_finish(m);
      }
      default:
        *close = true;
        return error_reply("not a request");
    }
  } catch (const std::exception& e) {
    *close = true;
    return error_reply(std::string("agent ") + name_ + ": " + e.what());
  } catch (...) {
    *close = true;
    return error_reply("agent " + name_ + ": unexpected error");
  }
  *close = true;
  return error_reply("malformed request: " + error);
}

std::vector<uint8_t> AgentSession::on_prepare(const Prepare& m) {
  config_ = RunConfig{};
  for (const std::string& t : m.targets) config_.targets.push_back(parse_target(t));
  config_.processes = m.processes;
  config_.max_in_flight = m.max_in_flight;
  config_.io_size = m.io_size;
  config_.timeout_ms = static_cast<int>(m.timeout_ms);
  config_.seed = m.seed;
  config_.mix = OpMix::from_percentages(m.mix_name, m.mix_percent);
  config_.files_per_dir = m.files_per_dir;
  config_.mib_per_op = m.mib_per_op;
  config_.workdir = m.workdir;
  config_.file_sizes = m.file_sizes;

  FilesetParams fp;
  fp.peak_ops = m.peak_ops;
  fp.mib_per_op = m.mib_per_op;
  fp.workers = m.processes;
  fp.targets = config_.targets.size();
  fp.files_per_dir = m.files_per_dir;
  fp.seed = m.seed;
  fp.file_sizes = m.file_sizes;
  shape_ = plan_fileset(fp);

  for (size_t i = 0; i < config_.processes; ++i) {
    WorkerOptions wo;
    wo.id = i;
    wo.workers = config_.processes;
    wo.max_in_flight = config_.max_in_flight;
    wo.timeout_ms = config_.timeout_ms;
    wo.seed = config_.seed;
    wo.executor.io_size = config_.io_size;
    wo.executor.unstable_writes = config_.mix.percent(OpType::kCommit) > 0;
    workers_.push_back(std::make_unique<LoadWorker>(config_.targets, config_.mix, wo));
  }
  try {
    for_each_worker(workers_, [](LoadWorker& w, std::string* err) { return w.connect(err); });
  } catch (const RunError& e) {
    workers_.clear();
    return error_reply(name_ + ": " + e.what());
  }
  Prepared reply;
  for (const auto& s : workers_[0]->sessions()) reply.facts.push_back(s->facts());
  reply.fileset_bytes_per_target = shape_.bytes() * config_.processes;
  state_ = State::kPrepared;
  util::log("loadgen").info("agent " + name_ + ": prepared " + std::to_string(config_.processes) +
                            " processes on " + std::to_string(config_.targets.size()) + " targets");
  return encode(reply);
}

std::vector<uint8_t> AgentSession::on_build() {
  int64_t start = monotonic_ns();
  try {
    for_each_worker(workers_, [&](LoadWorker& w, std::string* err) {
      return w.build_fileset(shape_, config_.workdir, err);
    });
  } catch (const RunError& e) {
    workers_.clear();
    return error_reply(name_ + ": " + e.what());
  }
  Built reply;
  for (const auto& w : workers_) reply.fileset_bytes += w->fileset_bytes();
  reply.build_seconds = static_cast<double>(monotonic_ns() - start) / 1e9;
  state_ = State::kBuilt;
  return encode(reply);
}

std::vector<uint8_t> AgentSession::on_step(const Step& m) {
  const int64_t now = monotonic_ns();
  if (m.start_ns < now - kLateStartNs || m.start_ns > now + kFarStartNs) {
    return error_reply(name_ + ": step " + std::to_string(m.index) + " starts " +
                       std::to_string((m.start_ns - now) / 1000000) + " ms from now, outside the accepted window");
  }
  Timeline timeline(m.start_ns, m.warmup_ns, m.measure_ns, 1);
  const std::vector<double> rates{m.ops_per_sec};
  for_each_worker(workers_, [&](LoadWorker& w, std::string*) {
    w.run(timeline, rates);
    return true;
  });
  StepDone reply;
  reply.index = m.index;
  uint64_t refused = 0;
  for (const auto& w : workers_) {
    reply.stats.merge(w->step_stats()[0]);
    refused += w->refused();
    int64_t first = w->first_issues()[0];
    if (first && (!reply.first_issue_ns || first < reply.first_issue_ns)) reply.first_issue_ns = first;
    if (!w->failure().empty()) reply.failure += (reply.failure.empty() ? "" : "; ") + w->failure();
  }
  reply.refused = refused - refused_before_;
  refused_before_ = refused;
  ++next_step_;
  return encode(reply);
}

std::vector<uint8_t> AgentSession::on_finish(const Finish& m) {
  Finished reply;
  if (m.cleanup) {
    try {
      for_each_worker(workers_, [](LoadWorker& w, std::string* err) { return w.remove_fileset(err); });
      std::string err;
      if (!workers_[0]->remove_workdir(&err)) reply.cleanup_error = err;
    } catch (const RunError& e) {
      reply.cleanup_error = e.what();
    }
  }
  state_ = State::kDone;
  workers_.clear();
  return encode(reply);
}

}  // namespace nasd::bench::agent
