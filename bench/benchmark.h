// A whole run: connect every worker to every target, build the fileset, run the load steps on
// one shared timeline, and turn what the workers measured into per-step results.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <sys/types.h>
#include <vector>

#include "bench/fileset_plan.h"
#include "bench/mix.h"
#include "bench/nfs_session.h"
#include "bench/stats.h"
#include "bench/target.h"

namespace nasd::bench {

struct RunConfig {
  std::vector<Target> targets;
  // --targets: process i uses target i mod T only (process_targets.h); otherwise every
  // process rotates over every target request by request.
  bool target_per_process = false;
  size_t processes = 2;
  std::vector<double> loads;      // requested ops/s per step, in run order
  double warmup_seconds = 5;
  double step_seconds = 30;
  OpMix mix = OpMix::specsfs2008();
  double mib_per_op = 120;
  size_t files_per_dir = 30;
  std::string workdir;            // one path component under every export root
  double tolerance_pct = 10;
  size_t max_in_flight = 64;      // per process
  uint32_t io_size = 32768;
  int timeout_ms = 10000;
  uint64_t seed = 1;
  bool cleanup = false;           // remove the fileset after the last step
  std::vector<FileSizeBucket> file_sizes;  // data file sizes; empty = the SPECsfs-like default
  // SFS2014 business-metric run (--workload): the workload's name and unit, and each step's
  // business metric (loads[i] = business_metrics[i] × ops per metric). Empty for op-rate runs.
  std::string workload;           // "vda", ...; "" = an SFS97/SFS2008-style op-rate run
  std::string metric_unit;        // "Streams", ...
  std::vector<double> business_metrics;
  // Micro-benchmark shapes (bench/perf_vs_ganesha.sh): WRITE stability, streaming READ/WRITE,
  // and a directory of this many entries that READDIRPLUS lists whole (0 = none).
  enum class WriteStability { kAuto, kUnstable, kFileSync } write_stability = WriteStability::kAuto;
  bool sequential = false;
  bool create_when_nothing_to_remove = false;
  size_t listing_entries = 0;
  // A server process on this machine whose CPU time (user + system) is read at the start and end
  // of every measured interval; 0 = none.
  pid_t server_pid = 0;
  // With server_pid: after building the fileset, wait until the server is idle (under 5% of one
  // CPU over half a second) before the first step, for at most this long, so the steps measure
  // the server's steady state rather than the write-behind of the fileset just written. 0 = no wait.
  double settle_seconds = 0;
  // A block device on this machine ("vda", as /proc/diskstats names it) whose bytes written over
  // every measured interval go in the report and CSV (disk_written.h); "" = none.
  std::string disk_device;
};

struct StepResult {
  double requested_ops = 0;
  double achieved_ops = 0;
  double business_metric = 0;     // 0 for op-rate runs
  double mean_ms = 0, p50_ms = 0, p99_ms = 0;
  double mb_per_sec = 0;          // READ+WRITE payload, 10^6 bytes per second
  uint64_t ok = 0, errors = 0;
  bool missed = false;
  double server_cpu_seconds = -1;  // over the measured interval; < 0 when not measured
  double server_cpu_us_per_op() const {
    return server_cpu_seconds >= 0 && ok > 0 ? server_cpu_seconds * 1e6 / static_cast<double>(ok) : -1;
  }
  // Bytes the --disk-device wrote over the measured interval, per second (10^6 bytes); < 0 when
  // not measured.
  double disk_written_mb_per_sec = -1;
  StepStats stats;
};

// One load generator of a many-host run (bench/coordinator.h), as the report shows it.
struct AgentStepSummary {
  uint64_t ok = 0;
  double achieved_ops = 0, mb_per_sec = 0, mean_ms = 0;
  double start_offset_ms = 0;  // its first request after the step's planned start
};

struct AgentSummary {
  std::string name, address;
  std::vector<std::string> targets;
  uint64_t fileset_bytes = 0;
  std::vector<AgentStepSummary> steps;
};

struct RunResult {
  std::vector<StepResult> steps;
  double peak_ops = 0;
  double overall_response_ms = 0;
  FilesetShape shape;              // per process and target
  uint64_t fileset_bytes = 0;      // all processes, all targets, as created
  double build_seconds = 0;
  double settle_seconds = 0;       // how long the server took to go idle after the build
  std::vector<ServerFacts> facts;  // per target, as seen by the first process
  std::string started_at;          // local time, for the report
  uint64_t refused = 0;            // requests libnfs would not queue
  std::vector<std::string> failures;  // processes that stopped early, and why: the run is invalid
  std::string cleanup_error;          // why --cleanup left something behind ("" when it did not)
  uint32_t transfer_bytes = 0;        // READ/WRITE size as used (the server's rtmax/wtmax cap it)
  // Many-host runs only (empty from one host): each load generator, and per step how far apart
  // the load generators' first requests were (latest minus earliest, on the coordinator's clock).
  std::vector<AgentSummary> agents;
  std::vector<double> step_start_spread_ms;
};

// Before anything is created: does the fileset fit the space FSSTAT reports on every target?
// `per_target_bytes` is what all processes together will create on one target. "" when it fits,
// else a message naming the target, what is needed and what is free.
std::string check_fileset_fits(const std::vector<Target>& targets, const std::vector<ServerFacts>& facts,
                               uint64_t per_target_bytes);

// Turn merged per-step stats into results (throughput, latency, MISSED) and the run summary.
void summarize(const RunConfig& config, RunResult* result);

struct RunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Status for the progress line, delivered about once a second from the controlling thread.
struct Progress {
  size_t step = 0, steps = 0;
  double requested_ops = 0;
  double elapsed_s = 0, total_s = 0;
  double achieved_ops = 0;  // over the last interval
  double mean_ms = 0;       // over the last interval
  uint64_t errors = 0;      // since the start
  bool warmup = false;
};
using ProgressFn = std::function<void(const Progress&)>;

// The fileset a run of `config` creates, per process and target, planned as run_benchmark does
// (nothing touches a server); shape.bytes() × processes is what one target must hold.
FilesetShape planned_fileset(const RunConfig& config);

// Throws RunError when a target cannot be mounted or the fileset cannot be built.
RunResult run_benchmark(const RunConfig& config, const ProgressFn& progress);

}  // namespace nasd::bench
