#include "bench/report_writer.h"

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>

#include <algorithm>
#include <ctime>
#include <iomanip>
#include <sstream>

namespace nasd::bench {

namespace {

const char* const kRule = "================================================================================";

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return fixed(bytes, u == 0 ? 0 : 1) + " " + units[u];
}

std::string write_stability_text(const RunConfig& c) {
  switch (c.write_stability) {
    case RunConfig::WriteStability::kUnstable: return c.mix.percent(OpType::kCommit) > 0 ? "UNSTABLE + COMMIT" : "UNSTABLE";
    case RunConfig::WriteStability::kFileSync: return "FILE_SYNC";
    case RunConfig::WriteStability::kAuto: break;
  }
  return c.mix.percent(OpType::kCommit) > 0 ? "UNSTABLE + COMMIT" : "FILE_SYNC";
}

void heading(std::ostream& out, const std::string& title, char underline) {
  out << title << '\n' << std::string(title.size(), underline) << '\n';
}

void row(std::ostream& out, const std::string& name, const std::string& value) {
  out << std::left << std::setw(36) << name << value << '\n';
}

void load_generators(std::ostream& out, const RunResult& r);
void many_host_dataflow(std::ostream& out, const RunConfig& c, const RunResult& r);

void performance(std::ostream& out, const RunResult& r) {
  heading(out, "Performance", '=');
  out << "    Throughput        Response       Requested\n"
      << "    (ops/sec)          (msec)        (ops/sec)    Notes\n"
      << "---------------------  ----------   -----------  ------\n";
  for (const StepResult& s : r.steps) {
    out << std::right << std::setw(13) << fixed(s.achieved_ops, 0) << std::setw(18) << fixed(s.mean_ms, 2)
        << std::setw(15) << fixed(s.requested_ops, 0) << "    " << (s.missed ? "MISSED" : "") << '\n';
  }
  bool watched = std::any_of(r.steps.begin(), r.steps.end(), [](const StepResult& s) { return s.disk_written_mb_per_sec >= 0; });
  if (watched) {
    out << "\nDisk written (the --disk-device over each measured interval)\n"
        << "    Throughput         MB/s data     Disk MB/s\n";
    for (const StepResult& s : r.steps) {
      out << std::right << std::setw(13) << fixed(s.achieved_ops, 0) << std::setw(18) << fixed(s.mb_per_sec, 1)
          << std::setw(14) << (s.disk_written_mb_per_sec >= 0 ? fixed(s.disk_written_mb_per_sec, 1) : "-") << '\n';
    }
  }
  bool measured = std::any_of(r.steps.begin(), r.steps.end(), [](const StepResult& s) { return s.server_cpu_seconds >= 0; });
  if (!measured) return;
  out << "\nServer CPU (user + system of the server process over each measured interval)\n"
      << "    Throughput      CPU seconds    CPU usec/op\n";
  for (const StepResult& s : r.steps) {
    out << std::right << std::setw(13) << fixed(s.achieved_ops, 0) << std::setw(17)
        << (s.server_cpu_seconds >= 0 ? fixed(s.server_cpu_seconds, 2) : "-") << std::setw(15)
        << (s.server_cpu_us_per_op() >= 0 ? fixed(s.server_cpu_us_per_op(), 1) : "-") << '\n';
  }
}

void server_configuration(std::ostream& out, const RunConfig& c, const RunResult& r) {
  heading(out, "Server Configuration", '=');
  for (size_t i = 0; i < c.targets.size(); ++i) {
    out << "Target " << i + 1 << "  " << c.targets[i].text << '\n';
    if (i < r.facts.size()) {
      const ServerFacts& f = r.facts[i];
      row(out, "  Max Read / Write Transfer", std::to_string(f.rtmax) + " / " + std::to_string(f.wtmax) + " bytes");
      row(out, "  Exported Capacity (FSSTAT)", human_bytes(static_cast<double>(f.total_bytes)) + ", " +
                                                  human_bytes(static_cast<double>(f.free_bytes)) + " free");
      row(out, "  Files (FSSTAT)", std::to_string(f.total_files) + ", " + std::to_string(f.free_files) + " free");
    }
  }
}

void load_configuration(std::ostream& out, const RunConfig& c, const RunResult& r) {
  heading(out, "Load Generator (LG) Configuration", '=');
  heading(out, "Benchmark Parameters", '-');
  row(out, "Network Attached Storage Type", "NFS V3 over TCP (libnfs raw RPC)");
  row(out, "Number of Load Generators", std::to_string(std::max<size_t>(1, r.agents.size())));
  row(out, "Number of Processes per LG", std::to_string(c.processes));
  row(out, "Max Requests in Flight per Process", std::to_string(c.max_in_flight));
  row(out, "Transfer Size", std::to_string(c.io_size) + " bytes (capped by rtmax/wtmax)");
  row(out, "Fileset Size", human_bytes(static_cast<double>(r.fileset_bytes)) + " (" +
                               fixed(c.mib_per_op, 3) + " MiB per requested op/s)");
  std::ostringstream shape;
  shape << r.shape.dirs << " dirs, " << r.shape.file_sizes.size() << " files, " << r.shape.symlinks
        << " symlinks, " << r.shape.spares << " spares per process per target";
  row(out, "Fileset Layout", shape.str());
  row(out, "Fileset Build Time", fixed(r.build_seconds, 1) + " s");
  if (c.settle_seconds > 0) {
    row(out, "Server Idle After Build", "after " + fixed(r.settle_seconds, 1) + " s (waited at most " +
                                            fixed(c.settle_seconds, 0) + " s)");
  }
  row(out, "Operation Mix", c.mix.name());
  row(out, "WRITE Stability / Access", write_stability_text(c) + " / " + (c.sequential ? "sequential" : "random"));
  if (c.listing_entries) row(out, "READDIRPLUS", "whole listing of a " + std::to_string(c.listing_entries) + "-entry directory");
  row(out, "  Proportions", c.mix.describe());
  row(out, "Warmup / Measured Time per Step", fixed(c.warmup_seconds, 1) + " s / " + fixed(c.step_seconds, 1) + " s");
  row(out, "Missed-Load Tolerance", fixed(c.tolerance_pct, 1) + "%");
  row(out, "Pacing", "open loop, requests due on a fixed schedule per process");
  out << '\n';
  if (!r.agents.empty()) {
    load_generators(out, r);
    return;
  }
  heading(out, "Testbed Configuration", '-');
  out << "LG No  Processes  Target Filesystems\n"
      << "-----  ---------  ------------------\n";
  std::string targets;
  for (size_t i = 0; i < c.targets.size(); ++i) targets += (i ? ", " : "") + c.targets[i].export_path;
  out << std::left << std::setw(7) << "1" << std::setw(11) << ("1.." + std::to_string(c.processes)) << targets << '\n';
}

// --targets: which processes used which target (process i: target i mod T).
void per_process_dataflow(std::ostream& out, const RunConfig& c) {
  out << "One load generator with " << c.processes << " processes over " << c.targets.size()
      << " targets (--targets): process i mounts target i mod " << c.targets.size()
      << " only, so the first\nprocesses use the first node, the next the next node, and so on:\n";
  for (size_t t = 0; t < c.targets.size(); ++t) {
    out << "  " << c.targets[t].text << ": processes";
    size_t n = 0;
    for (size_t p = t; p < c.processes; p += c.targets.size(), ++n) out << ' ' << p;
    if (n == 0) out << " none";
    out << '\n';
  }
}

void uniform_access(std::ostream& out, const RunConfig& c, const RunResult& r) {
  heading(out, "Uniform Access Rule Compliance", '=');
  if (!r.agents.empty()) {
    many_host_dataflow(out, c, r);
    return;
  }
  if (c.target_per_process) {
    out << "Not uniform: ";
    per_process_dataflow(out, c);
    return;
  }
  out << "Each of the " << c.processes << " processes has its own connection to each of the "
      << c.targets.size() << " targets and its own part of the fileset on each, and sends its\n"
      << "requests to the targets in strict rotation, so every process accesses every target equally.\n";
}

void errors(std::ostream& out, const RunResult& r) {
  heading(out, "Errors", '=');
  bool any = !r.failures.empty();
  for (size_t i = 0; i < r.steps.size(); ++i) {
    for (OpType op : kAllOpTypes) {
      const OpCounters& c = r.steps[i].stats.per_op[index_of(op)];
      if (c.errors == 0) continue;
      any = true;
      out << "Step " << i + 1 << "  " << std::left << std::setw(12) << op_name(op) << c.errors << " (";
      bool first = true;
      for (const auto& [status, n] : c.errors_by_status) {
        out << (first ? "" : ", ")
            << (status == kRpcFailure ? std::string("RPC failure") : std::string(nfsstat3_to_str(status))) << " " << n;
        first = false;
      }
      out << ")\n";
    }
  }
  if (!any) out << "None.\n";
  if (r.refused) out << r.refused << " requests could not be queued by the client library.\n";
  for (const std::string& f : r.failures) out << "INVALID RUN: " << f << '\n';
}

void achieved_mix(std::ostream& out, const RunResult& r) {
  heading(out, "Achieved Operation Mix (all measured intervals)", '=');
  StepStats all;
  for (const StepResult& s : r.steps) all.merge(s.stats);
  uint64_t total = all.ok();
  out << "Operation      Count    Share   Mean msec   p99 msec\n"
      << "-----------  --------  ------  ----------  ---------\n";
  for (OpType op : kAllOpTypes) {
    const OpCounters& c = all.per_op[index_of(op)];
    if (c.ok == 0 && c.errors == 0) continue;
    double share = total ? 100.0 * static_cast<double>(c.ok) / static_cast<double>(total) : 0;
    out << std::left << std::setw(11) << op_name(op) << std::right << std::setw(10) << c.ok << std::setw(7)
        << fixed(share, 1) << "%" << std::setw(12) << fixed(c.latency.mean_ms(), 3) << std::setw(11)
        << fixed(c.latency.percentile_ms(99), 3) << '\n';
  }
  out << "Requests sent more than 1 ms after their due time: " << all.late_issues << '\n';
}

// Many-host runs: each load generator, its targets, and per step what it achieved and how far its
// first request was from the step's planned start (the barrier).
void load_generators(std::ostream& out, const RunResult& r) {
  heading(out, "Load Generators", '=');
  out << "LG No  Name              Address                  Targets\n"
      << "-----  ----------------  -----------------------  -------\n";
  for (size_t k = 0; k < r.agents.size(); ++k) {
    const AgentSummary& a = r.agents[k];
    std::string targets;
    for (size_t j = 0; j < a.targets.size(); ++j) targets += (j ? ", " : "") + a.targets[j];
    out << std::left << std::setw(7) << k + 1 << std::setw(18) << a.name << std::setw(25) << a.address << targets
        << '\n';
  }
  out << '\n';
  heading(out, "Per Load Generator Results", '-');
  out << "Step  LG No  Name                    Ok    Ops/Sec     MB/Sec   Mean msec  Start msec\n"
      << "----  -----  ----------------  --------  ---------  ---------  ----------  ----------\n";
  for (size_t i = 0; i < r.steps.size(); ++i) {
    for (size_t k = 0; k < r.agents.size(); ++k) {
      if (i >= r.agents[k].steps.size()) continue;
      const AgentStepSummary& s = r.agents[k].steps[i];
      out << std::right << std::setw(4) << i + 1 << std::setw(7) << k + 1 << "  " << std::left << std::setw(16)
          << r.agents[k].name << std::right << std::setw(10) << s.ok << std::setw(11) << fixed(s.achieved_ops, 1)
          << std::setw(11) << fixed(s.mb_per_sec, 2) << std::setw(12) << fixed(s.mean_ms, 3) << std::setw(12)
          << fixed(s.start_offset_ms, 2) << '\n';
    }
  }
  out << '\n';
  for (size_t i = 0; i < r.step_start_spread_ms.size(); ++i) {
    out << "Step barrier: step " << i + 1 << " started on all " << r.agents.size()
        << " load generators within " << fixed(r.step_start_spread_ms[i], 2) << " msec\n";
  }
}

void many_host_dataflow(std::ostream& out, const RunConfig& c, const RunResult& r) {
  out << r.agents.size() << " load generators with " << c.processes << " processes each, coordinated by one "
      << "nasd-loadgen: the targets were assigned round-robin\nin hosts-file order (load generator k used target "
      << "k mod " << c.targets.size() << (c.targets.size() > r.agents.size() ? ", and every further target that is k mod the number of load generators" : "")
      << "), so as load generators are added each one\nuses the next target. Every step started at one instant on all "
      << "of them (clock offsets measured per step) and\nthe step's results were merged: operations and MB/s added, "
      << "latency histograms merged.\n";
}

// The SFS2014 layout: the Performance table by business metric, then what the tool can know of the
// product, its tuning, storage, transport and dataflow.
void sfs2014_performance(std::ostream& out, const RunConfig& c, const RunResult& r) {
  heading(out, "Performance", '=');
  std::string unit = c.metric_unit;
  out << "   Business      Average                                Required\n"
      << "    Metric       Latency       " << std::left << std::setw(9) << unit << "    " << std::setw(9) << unit
      << "    Ops/Sec\n" << std::right
      << std::setw(12) << ("(" + unit + ")") << "       (msec)      Ops/Sec       MB/Sec    (ops/sec)   Step\n"
      << "------------ ------------ ------------ ------------ ------------ ------\n";
  for (const StepResult& s : r.steps) {
    out << std::setw(12) << fixed(s.business_metric, 0) << std::setw(13) << fixed(s.mean_ms, 1) << std::setw(13)
        << fixed(s.achieved_ops, 0) << std::setw(13) << fixed(s.mb_per_sec, 1) << std::setw(13)
        << fixed(s.requested_ops, 0) << "  " << (s.missed ? "MISSED" : "met") << '\n';
  }
}

void sfs2014_sections(std::ostream& out, const RunConfig& c, const RunResult& r, const ReportLabels& labels) {
  heading(out, "Product and Test Information", '=');
  row(out, "System Under Test", labels.system_under_test);
  row(out, "Tested by", "nasd-loadgen (not SPEC's netmist)");
  row(out, "Date Tested", r.started_at);
  row(out, "Workload", c.workload + ", " + c.mix.name());
  row(out, "  Proportions", c.mix.describe());
  out << '\n';
  heading(out, "Software Configuration and Tuning", '=');
  row(out, "Processes per Load Generator", std::to_string(c.processes));
  row(out, "Max Requests in Flight per Process", std::to_string(c.max_in_flight));
  row(out, "Transfer Size", std::to_string(r.transfer_bytes) + " bytes (asked " + std::to_string(c.io_size) +
                                ", capped by rtmax/wtmax)");
  row(out, "WRITE Stability", write_stability_text(c));
  row(out, "Warmup / Measured Time per Step", fixed(c.warmup_seconds, 1) + " s / " + fixed(c.step_seconds, 1) + " s");
  row(out, "Missed-Rate Tolerance", fixed(c.tolerance_pct, 1) + "%");
  out << '\n';
  heading(out, "Storage and Filesystems", '=');
  for (size_t i = 0; i < c.targets.size() && i < r.facts.size(); ++i) {
    const ServerFacts& f = r.facts[i];
    out << "Target " << i + 1 << "  " << c.targets[i].export_path << '\n';
    row(out, "  Capacity (FSSTAT)", human_bytes(static_cast<double>(f.total_bytes)) + ", " +
                                        human_bytes(static_cast<double>(f.free_bytes)) + " free at mount");
    row(out, "  Files (FSSTAT)", std::to_string(f.total_files) + ", " + std::to_string(f.free_files) + " free");
  }
  row(out, "Fileset Created", human_bytes(static_cast<double>(r.fileset_bytes)) + " for " +
                                  fixed(c.business_metrics.empty() ? 0 : c.business_metrics.back(), 0) + " " +
                                  c.metric_unit + " (" + fixed(c.mib_per_op, 3) + " MiB per requested op/s)");
  std::ostringstream shape;
  shape << r.shape.dirs << " dirs, " << r.shape.file_sizes.size() << " files, " << r.shape.spares
        << " empty files per process per target";
  row(out, "Fileset Layout", shape.str());
  out << '\n';
  heading(out, "Transport Configuration", '=');
  row(out, "Protocol", "NFSv3 over TCP (libnfs raw RPC), MOUNT v3");
  for (size_t i = 0; i < c.targets.size(); ++i) {
    row(out, "Target " + std::to_string(i + 1), c.targets[i].text);
  }
  out << '\n';
  heading(out, "Dataflow", '=');
  if (!r.agents.empty()) {
    many_host_dataflow(out, c, r);
    out << '\n';
    load_generators(out, r);
    return;
  }
  if (c.target_per_process) {
    per_process_dataflow(out, c);
    return;
  }
  out << "One load generator with " << c.processes << " processes; each mounts every one of the "
      << c.targets.size() << " targets and sends its\nrequests to them in strict rotation, so the load "
      << "on every target grows with the business metric.\n";
}

}  // namespace

void write_report(std::ostream& out, const RunConfig& c, const RunResult& r, const ReportLabels& labels) {
  if (!c.workload.empty()) {
    // The headline metric is the highest business metric whose step met its required rate.
    double best = 0;
    for (const StepResult& s : r.steps) {
      if (!s.missed) best = std::max(best, s.business_metric);
    }
    out << "nasd-loadgen SFS2014_" << c.workload << "-style Result (not a SPEC result)\n" << kRule << '\n';
    out << labels.system_under_test << '\n';
    out << "SFS2014_" << c.workload << " = " << fixed(best, 0) << " " << c.metric_unit
        << " (Overall Response Time = " << fixed(r.overall_response_ms, 2) << " msec)\n";
    out << kRule << "\n\n";
    sfs2014_performance(out, c, r);
    out << kRule << "\n\n";
    sfs2014_sections(out, c, r, labels);
    out << '\n';
    errors(out, r);
    out << '\n';
    achieved_mix(out, r);
    if (!labels.notes.empty()) {
      out << '\n';
      heading(out, "Other Notes", '=');
      out << labels.notes << '\n';
    }
    out << kRule << '\n' << "Started " << r.started_at << "; generated by nasd-loadgen\n";
    return;
  }
  out << "nasd-loadgen NFSv3 Result (SPECsfs2008-style workload, not a SPEC result)\n" << kRule << '\n';
  out << labels.system_under_test << '\n';
  out << "nasd-loadgen " << c.mix.name() << " = " << fixed(r.peak_ops, 0) << " Ops/Sec (Overall Response Time = "
      << fixed(r.overall_response_ms, 2) << " msec)\n";
  out << kRule << "\n\n";
  performance(out, r);
  out << kRule << "\n\n";
  server_configuration(out, c, r);
  out << '\n';
  load_configuration(out, c, r);
  out << '\n';
  uniform_access(out, c, r);
  out << '\n';
  errors(out, r);
  out << '\n';
  achieved_mix(out, r);
  if (!labels.notes.empty()) {
    out << '\n';
    heading(out, "Other Notes", '=');
    out << labels.notes << '\n';
  }
  out << kRule << '\n' << "Started " << r.started_at << "; generated by nasd-loadgen\n";
}

}  // namespace nasd::bench
