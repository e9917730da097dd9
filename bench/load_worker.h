// One load process: its own libnfs connection ("mount point") to every target, its own part of
// the fileset on each, and an open-loop pacing loop that sends its share of the requested load,
// rotating over the targets request by request so every process touches every target (the
// uniform access rule).
#pragma once

#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/fileset.h"
#include "bench/fileset_plan.h"
#include "bench/mix.h"
#include "bench/nfs_session.h"
#include "bench/op_executor.h"
#include "bench/stats.h"
#include "bench/step_plan.h"

namespace nasd::bench {

struct WorkerOptions {
  size_t id = 0;
  size_t workers = 1;        // how many share the load (for the pacing phase)
  size_t max_in_flight = 64; // per worker, over all its targets
  int timeout_ms = 10000;
  uint64_t seed = 1;
  ExecutorOptions executor;
};

// Counters the progress line reads while the run goes on; totals since the start of the run.
struct LiveCounters {
  std::atomic<uint64_t> ok{0}, errors{0}, latency_ns{0};
};

class LoadWorker final : public ReplySink {
 public:
  LoadWorker(std::vector<Target> targets, const OpMix& mix, const WorkerOptions& options);
  ~LoadWorker() override;

  bool connect(std::string* error);
  bool build_fileset(const FilesetShape& shape, const std::string& workdir, std::string* error);
  // Removes this worker's fileset from every target (after run()); then one worker, after all
  // are done, removes the shared workdir.
  bool remove_fileset(std::string* error);
  bool remove_workdir(std::string* error);
  // Runs the whole timeline (every step at `step_rates[i]` total ops/s shared by all workers),
  // then waits for the last replies. Blocks; call from the worker's own thread.
  void run(const Timeline& timeline, const std::vector<double>& step_rates);

  const std::vector<StepStats>& step_stats() const { return stats_; }
  // Per step of the last run(): when this worker sent its first request (0: it sent none).
  const std::vector<int64_t>& first_issues() const { return first_issue_ns_; }
  const LiveCounters& live() const { return live_; }
  const std::vector<std::unique_ptr<NfsSession>>& sessions() const { return sessions_; }
  uint64_t fileset_bytes() const;
  uint64_t refused() const { return refused_; }
  // Why the worker stopped early (a connection failed), or "" when it ran the whole timeline.
  const std::string& failure() const { return failure_; }

  void on_reply(OpType op, int status, int64_t sent_ns, int64_t received_ns, uint64_t bytes) override;

 private:
  size_t in_flight() const;
  void service(int64_t wait_ns);

  std::vector<Target> targets_;
  MixSampler sampler_;
  WorkerOptions options_;
  std::mt19937_64 rng_;
  std::vector<Fileset> filesets_;                    // one per target
  std::vector<std::unique_ptr<OpExecutor>> executors_;
  std::vector<std::unique_ptr<NfsSession>> sessions_; // destroyed first: see ~LoadWorker
  const Timeline* timeline_ = nullptr;
  std::vector<StepStats> stats_;
  std::vector<int64_t> first_issue_ns_;
  LiveCounters live_;
  uint64_t refused_ = 0;
  bool broken_ = false;
  std::string failure_;
};

}  // namespace nasd::bench
