#include "bench/benchmark.h"

#include "bench/process_targets.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>
#include <mutex>
#include <thread>

#include "bench/clock.h"
#include "bench/disk_written.h"
#include "bench/load_worker.h"
#include "bench/process_cpu.h"
#include "bench/report_math.h"
#include "bench/worker_threads.h"

namespace nasd::bench {

namespace {

constexpr int64_t kStartDelayNs = 200000000;  // lets every thread reach its loop before step 1

std::string local_time_now() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a %b %d %H:%M:%S %Y", std::localtime(&t));
  return buf;
}

void watch_progress(const std::vector<std::unique_ptr<LoadWorker>>& workers, const Timeline& timeline,
                    const RunConfig& config, const ProgressFn& progress, const std::atomic<bool>& done) {
  uint64_t last_ok = 0, last_lat = 0;
  int64_t last_t = monotonic_ns();
  while (!done.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    int64_t now = monotonic_ns();
    if (now - last_t < 1000000000 && !done.load()) continue;
    uint64_t ok = 0, lat = 0, errors = 0;
    for (const auto& w : workers) {
      ok += w->live().ok.load(std::memory_order_relaxed);
      lat += w->live().latency_ns.load(std::memory_order_relaxed);
      errors += w->live().errors.load(std::memory_order_relaxed);
    }
    Progress p;
    p.steps = timeline.steps();
    std::optional<size_t> step = timeline.step_at(now);
    p.step = step ? *step + 1 : timeline.steps();
    p.requested_ops = config.loads[p.step - 1];
    p.warmup = step && now < timeline.measure_start(*step);
    p.elapsed_s = static_cast<double>(now - timeline.step_start(0)) / 1e9;
    p.total_s = static_cast<double>(timeline.end() - timeline.step_start(0)) / 1e9;
    double dt = static_cast<double>(now - last_t) / 1e9;
    p.achieved_ops = dt > 0 ? static_cast<double>(ok - last_ok) / dt : 0;
    p.mean_ms = ok > last_ok ? static_cast<double>(lat - last_lat) / static_cast<double>(ok - last_ok) / 1e6 : 0;
    p.errors = errors;
    if (now >= timeline.step_start(0)) progress(p);
    last_ok = ok;
    last_lat = lat;
    last_t = now;
  }
}

// Reads the server's CPU time and the disk's bytes written at the start and the end of every
// measured interval. A reading that fails (the server died) leaves that step unmeasured (-1).
void sample_steps(pid_t pid, const std::string& disk, const Timeline& timeline,
                  std::vector<double>* cpu_seconds, std::vector<double>* disk_mb_per_sec) {
  auto sleep_until = [](int64_t t) {
    int64_t now = monotonic_ns();
    if (t > now) std::this_thread::sleep_for(std::chrono::nanoseconds(t - now));
  };
  auto cpu = [pid]() -> std::optional<double> {
    if (pid <= 0) return std::nullopt;
    return process_cpu_seconds(pid);
  };
  auto written = [&disk]() -> std::optional<uint64_t> {
    if (disk.empty()) return std::nullopt;
    return disk_bytes_written(disk);
  };
  cpu_seconds->assign(timeline.steps(), -1);
  disk_mb_per_sec->assign(timeline.steps(), -1);
  for (size_t i = 0; i < timeline.steps(); ++i) {
    sleep_until(timeline.measure_start(i));
    std::optional<double> cpu_before = cpu();
    std::optional<uint64_t> disk_before = written();
    sleep_until(timeline.step_end(i));
    std::optional<double> cpu_after = cpu();
    std::optional<uint64_t> disk_after = written();
    if (cpu_before && cpu_after) (*cpu_seconds)[i] = *cpu_after - *cpu_before;
    if (disk_before && disk_after && *disk_after >= *disk_before)
      (*disk_mb_per_sec)[i] = static_cast<double>(*disk_after - *disk_before) / 1e6 /
                              timeline.measure_seconds();
  }
}

// Waits until the server uses under 5% of one CPU over half a second, at most `limit` seconds.
// Returns how long it waited.
double wait_until_idle(pid_t pid, double limit) {
  constexpr auto kWindow = std::chrono::milliseconds(500);
  constexpr double kIdleCpuSeconds = 0.025;  // 5% of the window
  int64_t start = monotonic_ns();
  int64_t give_up = start + static_cast<int64_t>(limit * 1e9);
  while (monotonic_ns() < give_up) {
    std::optional<double> before = process_cpu_seconds(pid);
    std::this_thread::sleep_for(kWindow);
    std::optional<double> after = process_cpu_seconds(pid);
    if (!before || !after || *after - *before < kIdleCpuSeconds) break;
  }
  return static_cast<double>(monotonic_ns() - start) / 1e9;
}

}  // namespace

void for_each_worker(std::vector<std::unique_ptr<LoadWorker>>& workers,
                     const std::function<bool(LoadWorker&, std::string*)>& fn) {
  std::mutex mu;
  std::string first_error;
  std::vector<std::thread> threads;
  for (auto& w : workers) {
    threads.emplace_back([&, wp = w.get()] {
      std::string error;
      bool ok = false;
      try {
        ok = fn(*wp, &error);
      } catch (const std::exception& e) {
        error = e.what();
      } catch (...) {
        error = "unexpected error";
      }
      if (!ok) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.empty()) first_error = error;
      }
    });
  }
  for (auto& t : threads) t.join();
  if (!first_error.empty()) throw RunError(first_error);
}

std::string check_fileset_fits(const std::vector<Target>& targets, const std::vector<ServerFacts>& facts,
                               uint64_t per_target_bytes) {
  // Headroom for directories, symlinks and the files CREATE adds during the run.
  const double kHeadroom = 1.05;
  for (size_t i = 0; i < targets.size() && i < facts.size(); ++i) {
    double need = static_cast<double>(per_target_bytes) * kHeadroom;
    if (need > static_cast<double>(facts[i].free_bytes)) {
      return "the fileset does not fit on " + targets[i].text + ": it needs " +
             std::to_string(static_cast<uint64_t>(need)) + " bytes (with 5% headroom) but FSSTAT reports " +
             std::to_string(facts[i].free_bytes) +
             " bytes free; lower the business metric / load or --fileset-scale / --fileset-mib-per-op";
    }
  }
  return "";
}

void summarize(const RunConfig& config, RunResult* result) {
  std::vector<CurvePoint> curve;
  double seconds = config.step_seconds;
  for (size_t i = 0; i < result->steps.size(); ++i) {
    StepResult& s = result->steps[i];
    s.requested_ops = config.loads[i];
    if (i < config.business_metrics.size()) s.business_metric = config.business_metrics[i];
    s.ok = s.stats.ok();
    s.errors = s.stats.errors();
    s.achieved_ops = seconds > 0 ? static_cast<double>(s.ok) / seconds : 0;
    LatencyHistogram all = s.stats.latency();
    s.mean_ms = all.mean_ms();
    s.p50_ms = all.percentile_ms(50);
    s.p99_ms = all.percentile_ms(99);
    s.mb_per_sec = seconds > 0 ? static_cast<double>(s.stats.bytes()) / 1e6 / seconds : 0;
    s.missed = missed_requested_load(s.requested_ops, s.achieved_ops, config.tolerance_pct);
    curve.push_back({s.achieved_ops, s.mean_ms});
  }
  int peak = peak_index(curve);
  result->peak_ops = peak >= 0 ? curve[peak].ops_per_sec : 0;
  result->overall_response_ms = overall_response_time(curve);
}

FilesetShape planned_fileset(const RunConfig& config) {
  FilesetParams fp;
  fp.peak_ops = config.loads.empty() ? 0 : *std::max_element(config.loads.begin(), config.loads.end());
  fp.mib_per_op = config.mib_per_op;
  fp.workers = config.processes;
  fp.targets = config.target_per_process ? 1 : std::max<size_t>(1, config.targets.size());
  fp.files_per_dir = config.files_per_dir;
  fp.seed = config.seed;
  fp.file_sizes = config.file_sizes;
  fp.listing_entries = config.listing_entries;
  return plan_fileset(fp);
}

RunResult run_benchmark(const RunConfig& config, const ProgressFn& progress) {
  if (config.targets.empty()) throw RunError("no targets");
  if (config.loads.empty()) throw RunError("no load steps");
  RunResult result;
  result.started_at = local_time_now();

  result.shape = planned_fileset(config);
  if (config.server_pid > 0 && !process_cpu_seconds(config.server_pid)) {
    throw RunError("--server-pid " + std::to_string(config.server_pid) + ": cannot read /proc/" +
                   std::to_string(config.server_pid) + "/stat");
  }
  if (!config.disk_device.empty() && !disk_bytes_written(config.disk_device)) {
    throw RunError("--disk-device " + config.disk_device + ": not in /proc/diskstats");
  }

  std::vector<std::unique_ptr<LoadWorker>> workers;
  for (size_t i = 0; i < config.processes; ++i) {
    WorkerOptions wo;
    wo.id = i;
    wo.workers = config.processes;
    wo.max_in_flight = config.max_in_flight;
    wo.timeout_ms = config.timeout_ms;
    wo.seed = config.seed;
    wo.executor.io_size = config.io_size;
    switch (config.write_stability) {
      case RunConfig::WriteStability::kAuto: wo.executor.unstable_writes = config.mix.percent(OpType::kCommit) > 0; break;
      case RunConfig::WriteStability::kUnstable: wo.executor.unstable_writes = true; break;
      case RunConfig::WriteStability::kFileSync: wo.executor.unstable_writes = false; break;
    }
    wo.executor.sequential = config.sequential;
    wo.executor.create_when_nothing_to_remove = config.create_when_nothing_to_remove;
    std::vector<Target> mine;
    for (size_t t : targets_of_process(i, config.targets.size(), config.target_per_process)) {
      mine.push_back(config.targets[t]);
    }
    workers.push_back(std::make_unique<LoadWorker>(std::move(mine), config.mix, wo));
  }

  int64_t build_start = monotonic_ns();
  for_each_worker(workers, [&](LoadWorker& w, std::string* err) { return w.connect(err); });
  // FSSTAT of each target, from the first process that mounts it.
  result.facts.resize(config.targets.size());
  for (size_t t = 0; t < config.targets.size(); ++t) {
    for (size_t i = 0; i < workers.size(); ++i) {
      const auto mine = targets_of_process(i, config.targets.size(), config.target_per_process);
      auto at = std::find(mine.begin(), mine.end(), t);
      if (at == mine.end()) continue;
      result.facts[t] = workers[i]->sessions()[static_cast<size_t>(at - mine.begin())]->facts();
      break;
    }
  }
  result.transfer_bytes = config.io_size;
  for (const ServerFacts& f : result.facts) {
    if (f.rtmax) result.transfer_bytes = std::min(result.transfer_bytes, f.rtmax);
    if (f.wtmax) result.transfer_bytes = std::min(result.transfer_bytes, f.wtmax);
  }
  std::string no_room;
  for (size_t t = 0; t < config.targets.size() && no_room.empty(); ++t) {
    const size_t on = processes_on_target(t, config.targets.size(), config.processes,
                                          config.target_per_process);
    if (on == 0) continue;
    no_room = check_fileset_fits({config.targets[t]}, {result.facts[t]}, result.shape.bytes() * on);
  }
  if (!no_room.empty()) throw RunError(no_room);
  for_each_worker(workers, [&](LoadWorker& w, std::string* err) {
    return w.build_fileset(result.shape, config.workdir, err);
  });
  result.build_seconds = static_cast<double>(monotonic_ns() - build_start) / 1e9;
  for (const auto& w : workers) result.fileset_bytes += w->fileset_bytes();
  if (config.server_pid > 0 && config.settle_seconds > 0) {
    result.settle_seconds = wait_until_idle(config.server_pid, config.settle_seconds);
  }

  auto ns = [](double s) { return static_cast<int64_t>(s * 1e9); };
  Timeline timeline(monotonic_ns() + kStartDelayNs, ns(config.warmup_seconds), ns(config.step_seconds),
                    config.loads.size());
  std::atomic<bool> done{false};
  std::thread watcher;
  if (progress) watcher = std::thread([&] { watch_progress(workers, timeline, config, progress, done); });
  std::vector<double> server_cpu, disk_mb_per_sec;
  std::thread step_sampler;
  if (config.server_pid > 0 || !config.disk_device.empty()) {
    step_sampler = std::thread([&] {
      sample_steps(config.server_pid, config.disk_device, timeline, &server_cpu, &disk_mb_per_sec);
    });
  }
  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back([&, wp = w.get()] { wp->run(timeline, config.loads); });
  for (auto& t : threads) t.join();
  done = true;
  if (watcher.joinable()) watcher.join();
  if (step_sampler.joinable()) step_sampler.join();

  result.steps.resize(config.loads.size());
  for (size_t i = 0; i < server_cpu.size() && i < result.steps.size(); ++i) {
    result.steps[i].server_cpu_seconds = server_cpu[i];
    result.steps[i].disk_written_mb_per_sec = disk_mb_per_sec[i];
  }
  for (const auto& w : workers) {
    for (size_t i = 0; i < result.steps.size(); ++i) result.steps[i].stats.merge(w->step_stats()[i]);
    result.refused += w->refused();
    if (!w->failure().empty()) result.failures.push_back(w->failure());
  }
  summarize(config, &result);
  if (config.cleanup && result.failures.empty()) {
    try {
      for_each_worker(workers, [](LoadWorker& w, std::string* err) { return w.remove_fileset(err); });
      std::string err;
      if (!workers[0]->remove_workdir(&err)) throw RunError(err);
    } catch (const RunError& e) {
      result.cleanup_error = e.what();  // the measurements stand; only the tidying failed
    }
  }
  return result;
}

}  // namespace nasd::bench
