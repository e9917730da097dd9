#include "bench/options.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <map>

#include "bench/agent_hosts.h"
#include "bench/sfs2014_workload.h"
#include "bench/step_plan.h"
#include "util/net.h"

namespace nasd::bench {

namespace {

double number(const std::string& opt, const std::string& v, double lo, double hi) {
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno != 0 || !std::isfinite(d) || d < lo || d > hi) {
    throw UsageError(opt + ": '" + v + "' is not a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return d;
}

size_t count(const std::string& opt, const std::string& v, size_t lo, size_t hi) {
  double d = number(opt, v, static_cast<double>(lo), static_cast<double>(hi));
  if (d != std::floor(d)) throw UsageError(opt + ": '" + v + "' is not a whole number");
  return static_cast<size_t>(d);
}

std::string default_workdir() {
  return "loadgen-" + std::to_string(std::time(nullptr)) + "-" + std::to_string(getpid());
}

}  // namespace

std::string usage() {
  return R"(usage: nasd-loadgen [run] --target URL [--target URL ...] (--load OPS [--steps N] | --loads A,B,C) [options]
       nasd-loadgen plot results.csv [more.csv ...] out.png|out.svg
       nasd-loadgen fileset-bytes [run options]   bytes of file data the run creates per target

Targets (each process mounts every target and rotates over them):
  --target URL            nfs://server[:port]/export[?nfsport=N&mountport=M&uid=U&gid=G] or server:/export
  --targets URL,URL,...   instead: process i uses target i mod N only (the SFS2014 report's dataflow:
                          the first processes on node 1, the next on node 2, ...)
Load:
  --load OPS              peak requested load (ops/s); with --steps N, run N steps of OPS/N .. OPS
  --steps N               number of evenly spaced steps (default 10)
  --loads A,B,C           explicit requested loads instead of --load/--steps
  --step-seconds S        measured time per step (default 30)
  --warmup-seconds S      unmeasured time before each step's measurement (default 5)
  --processes N           load processes (threads), each with its own connections (default 2)
  --max-inflight N        requests in flight per process before sends are late (default 64)
  --tolerance PCT         a step achieving less than (100-PCT)% of its load is MISSED (default 10)
                          (a load far above what the server does with --max-inflight 1 makes every
                          process a synchronous client: closed loop, one call at a time)
SFS2014 business-metric run (instead of --load/--loads and --mix):
  --workload NAME         vda, swbuild, vdi, database or eda: its mix, transfer size, file sizes,
                          ops/s and capacity per business metric (see bench/README.md)
  --business-metric LIST  business metric per step, e.g. 1,2,4,8 (streams, builds, desktops, ...)
  --fileset-scale F       fraction of SFS2014's capacity per business metric to create (default 1)
Workload:
  --mix NAME              specsfs2008 (default) or sfs97_r1
  --mix-file FILE         custom mix: `op percent` lines adding up to 100
  --fileset-mib-per-op X  fileset MiB per requested op/s (SPECsfs2008: 120, the default)
  --files-per-dir N       files per directory (default 30)
  --io-size BYTES         READ/WRITE size (default 32768, capped by the server)
  --file-size BYTES       every data file this size instead of the SPECsfs-like distribution
  --access random|sequential  READ/WRITE at random offsets (default) or streaming through each
                          process's files one transfer after the other
  --write-stability auto|unstable|file_sync  WRITE stable_how; auto (default): UNSTABLE when the
                          mix has COMMIT, else FILE_SYNC
  --create-when-nothing-to-remove  a REMOVE with no name left becomes a CREATE (default: it is
                          sent anyway and fails with NFS3ERR_NOENT)
  --listing-entries N     each process also gets a directory of N empty files, and every READDIRPLUS
                          lists all of it (following cookies to EOF); it counts as one operation
  --workdir NAME          directory created under every export (default loadgen-<time>-<pid>)
  --cleanup               remove the fileset after the last step
  --seed N                random seed (default 1)
  --timeout-ms MS         give up on a silent server after MS (default 10000)
Many hosts (agents started with `nasd-loadgen agent` on each load-generating host):
  --agents FILE           hosts file, `NAME ADDRESS[:PORT]` per line; targets go to agents
                          round-robin, every step starts at once on all, results are merged
  --agent-key FILE        the shared agent key (32 random bytes; made if missing)
  --coordinator-name N    this side's name in the handshake (default coordinator)
Output:
  --report FILE           ASCII report (default: stdout)
  --csv FILE              one row per step
  --plot FILE             also draw response time against throughput (.png or .svg)
  --server-name TEXT      system under test, for the report header
  --notes TEXT            free text for the report's notes
  --server-pid PID        a server process on this machine: its CPU time (user + system, /proc)
                          over each measured interval goes in the report and CSV, per operation
  --settle-seconds S      with --server-pid: after building the fileset, wait (at most S) until the
                          server is idle (under 5% of a CPU over 0.5 s) before the first step
  --disk-device NAME      a block device of this machine (as /proc/diskstats names it, e.g. vda):
                          the bytes it wrote over each measured interval, per second, go in
                          the report and CSV (is a server writing through to its disk?)
  --quiet                 no progress line on stderr
)";
}

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  double peak = 0;
  size_t steps = 10;
  std::string load_list, mix_name, mix_file, workload, metrics;
  double fileset_scale = 1;
  bool have_scale = false, have_io_size = false, have_mib = false;
  bool have_load = false, have_steps = false;

  using Handler = std::function<void(const std::string&)>;
  const std::map<std::string, Handler> with_value = {
      {"--targets", [&](const std::string& v) {
         if (o.config.target_per_process) throw UsageError("--targets given twice");
         if (!o.config.targets.empty()) throw UsageError("--target and --targets do not mix");
         o.config.target_per_process = true;
         size_t from = 0;
         while (from <= v.size()) {
           size_t comma = v.find(',', from);
           if (comma == std::string::npos) comma = v.size();
           try {
             o.config.targets.push_back(parse_target(v.substr(from, comma - from)));
           } catch (const TargetError& e) {
             throw UsageError(std::string("--targets: ") + e.what());
           }
           from = comma + 1;
         }
       }},
      {"--target", [&](const std::string& v) {
         if (o.config.target_per_process) throw UsageError("--target and --targets do not mix");
         try {
           o.config.targets.push_back(parse_target(v));
         } catch (const TargetError& e) {
           throw UsageError(std::string("--target: ") + e.what());
         }
       }},
      {"--load", [&](const std::string& v) { peak = number("--load", v, 1e-6, 1e9); have_load = true; }},
      {"--steps", [&](const std::string& v) { steps = count("--steps", v, 1, 1000); have_steps = true; }},
      {"--loads", [&](const std::string& v) { load_list = v; }},
      {"--step-seconds", [&](const std::string& v) { o.config.step_seconds = number("--step-seconds", v, 0.1, 1e6); }},
      {"--warmup-seconds", [&](const std::string& v) { o.config.warmup_seconds = number("--warmup-seconds", v, 0, 1e6); }},
      {"--processes", [&](const std::string& v) { o.config.processes = count("--processes", v, 1, 1024); }},
      {"--max-inflight", [&](const std::string& v) { o.config.max_in_flight = count("--max-inflight", v, 1, 65536); }},
      {"--tolerance", [&](const std::string& v) { o.config.tolerance_pct = number("--tolerance", v, 0, 100); }},
      {"--mix", [&](const std::string& v) { mix_name = v; }},
      {"--workload", [&](const std::string& v) { workload = v; }},
      {"--business-metric", [&](const std::string& v) { metrics = v; }},
      {"--fileset-scale", [&](const std::string& v) { fileset_scale = number("--fileset-scale", v, 1e-12, 1e3); have_scale = true; }},
      {"--mix-file", [&](const std::string& v) { mix_file = v; }},
      {"--fileset-mib-per-op", [&](const std::string& v) { o.config.mib_per_op = number("--fileset-mib-per-op", v, 0, 1e6); have_mib = true; }},
      {"--files-per-dir", [&](const std::string& v) { o.config.files_per_dir = count("--files-per-dir", v, 1, 1000000); }},
      {"--io-size", [&](const std::string& v) { o.config.io_size = static_cast<uint32_t>(count("--io-size", v, 1, 1 << 20)); have_io_size = true; }},
      {"--workdir", [&](const std::string& v) {
         if (v.empty() || v.find('/') != std::string::npos || v == "." || v == "..") {
           throw UsageError("--workdir: '" + v + "' must be a single path component");
         }
         o.config.workdir = v;
       }},
      {"--seed", [&](const std::string& v) { o.config.seed = count("--seed", v, 0, 1e15); }},
      {"--timeout-ms", [&](const std::string& v) { o.config.timeout_ms = static_cast<int>(count("--timeout-ms", v, 100, 3600000)); }},
      {"--report", [&](const std::string& v) { o.report_path = v; }},
      {"--csv", [&](const std::string& v) { o.csv_path = v; }},
      {"--plot", [&](const std::string& v) { o.plot_path = v; }},
      {"--file-size", [&](const std::string& v) {
         o.config.file_sizes = {{count("--file-size", v, 1, uint64_t{1} << 40), 100}};
       }},
      {"--access", [&](const std::string& v) {
         if (v != "random" && v != "sequential") throw UsageError("--access: '" + v + "' is not random or sequential");
         o.config.sequential = v == "sequential";
       }},
      {"--write-stability", [&](const std::string& v) {
         if (v == "auto") o.config.write_stability = RunConfig::WriteStability::kAuto;
         else if (v == "unstable") o.config.write_stability = RunConfig::WriteStability::kUnstable;
         else if (v == "file_sync") o.config.write_stability = RunConfig::WriteStability::kFileSync;
         else throw UsageError("--write-stability: '" + v + "' is not auto, unstable or file_sync");
       }},
      {"--listing-entries", [&](const std::string& v) { o.config.listing_entries = count("--listing-entries", v, 1, 1000000); }},
      {"--server-pid", [&](const std::string& v) { o.config.server_pid = static_cast<pid_t>(count("--server-pid", v, 1, 1 << 30)); }},
      {"--disk-device", [&](const std::string& v) { o.config.disk_device = v; }},
      {"--settle-seconds", [&](const std::string& v) { o.config.settle_seconds = number("--settle-seconds", v, 0, 3600); }},
      {"--server-name", [&](const std::string& v) { o.labels.system_under_test = v; }},
      {"--notes", [&](const std::string& v) { o.labels.notes = v; }},
      {"--agents", [&](const std::string& v) { o.agents_path = v; }},
      {"--agent-key", [&](const std::string& v) { o.agent_key_path = v; }},
      {"--coordinator-name", [&](const std::string& v) {
         if (!valid_agent_name(v)) throw UsageError("--coordinator-name: '" + v + "' is not [A-Za-z0-9._-]{1,64}");
         o.coordinator_name = v;
       }},
  };

  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i], value;
    bool inline_value = false;
    if (size_t eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      inline_value = true;
    }
    if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "--create-when-nothing-to-remove") {
      o.config.create_when_nothing_to_remove = true;
    } else if (a == "--cleanup") {
      o.config.cleanup = true;
    } else if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (auto h = with_value.find(a); h != with_value.end()) {
      if (!inline_value) {
        if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
        value = args[++i];
      }
      h->second(value);
    } else {
      throw UsageError("unknown option '" + args[i] + "'");
    }
  }
  if (o.help) return o;

  if (o.config.targets.empty()) throw UsageError("at least one --target is required");
  if (o.config.target_per_process && !o.agents_path.empty()) {
    throw UsageError("--targets is for one host; with --agents each agent takes its own target");
  }
  if (o.agents_path.empty() != o.agent_key_path.empty()) throw UsageError("--agents and --agent-key go together");
  if (!o.plot_path.empty() && o.csv_path.empty()) throw UsageError("--plot needs --csv (the plot is drawn from it)");
  if (!workload.empty() || !metrics.empty()) {
    if (workload.empty() || metrics.empty()) throw UsageError("--workload and --business-metric go together");
    if (have_load || have_steps || !load_list.empty()) {
      throw UsageError("--business-metric sets the load: no --load/--steps/--loads with --workload");
    }
    if (!mix_name.empty() || !mix_file.empty()) throw UsageError("--workload sets the mix: no --mix/--mix-file");
    if (have_mib) throw UsageError("--workload sizes the fileset: use --fileset-scale, not --fileset-mib-per-op");
    try {
      const Sfs2014Workload& w = sfs2014_workload(workload);
      o.config.workload = w.name;
      o.config.metric_unit = w.metric_unit;
      o.config.business_metrics = parse_business_metrics(metrics);
      o.config.loads = business_metric_loads(w, o.config.business_metrics);
      o.config.mix = w.mix;
      o.config.file_sizes = w.file_sizes;
      o.config.mib_per_op = fileset_mib_per_op(w, fileset_scale);
      if (!have_io_size) o.config.io_size = w.transfer_bytes;
    } catch (const MixError& e) {
      throw UsageError(std::string("--workload: ") + e.what());
    } catch (const StepPlanError& e) {
      throw UsageError(std::string("--business-metric: ") + e.what());
    }
    if (o.config.workdir.empty()) o.config.workdir = default_workdir();
    return o;
  }
  if (have_scale) throw UsageError("--fileset-scale needs --workload");
  try {
    if (!load_list.empty()) {
      if (have_load || have_steps) throw UsageError("--loads cannot be combined with --load/--steps");
      o.config.loads = parse_load_list(load_list);
    } else if (have_load) {
      o.config.loads = evenly_spaced_loads(peak, static_cast<int>(steps));
    } else {
      throw UsageError("give the requested load with --load OPS [--steps N] or --loads A,B,C");
    }
  } catch (const StepPlanError& e) {
    throw UsageError(e.what());
  }
  try {
    if (!mix_file.empty() && !mix_name.empty()) throw UsageError("--mix and --mix-file are exclusive");
    if (!mix_file.empty()) o.config.mix = OpMix::load(mix_file);
    if (!mix_name.empty()) o.config.mix = OpMix::builtin(mix_name);
  } catch (const MixError& e) {
    throw UsageError(e.what());
  }
  if (o.config.workdir.empty()) o.config.workdir = default_workdir();
  return o;
}

std::string agent_usage() {
  return R"(usage: nasd-loadgen agent --name NAME --key FILE [--listen ADDRESS[:PORT]] [--sessions N]

Waits for a coordinator (`nasd-loadgen run --agents FILE --agent-key FILE ...`) and runs the load
steps it asks for against the targets it assigns. Only load steps: nothing else can be asked.
  --name NAME             this agent's name, as in the coordinator's hosts file
  --key FILE              the shared agent key (made with 32 random bytes if missing; copy it)
  --listen ADDRESS[:PORT] numeric address to listen on (default 0.0.0.0:7460)
  --sessions N            serve N coordinators, then exit (default: until killed)
)";
}

AgentOptions parse_agent_options(const std::vector<std::string>& args) {
  AgentOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      o.help = true;
      return o;
    }
    if (i + 1 >= args.size()) throw UsageError(a == "--name" || a == "--key" || a == "--listen" || a == "--sessions"
                                                   ? a + " needs a value"
                                                   : "unknown option '" + a + "'");
    const std::string& v = args[++i];
    if (a == "--name") {
      if (!valid_agent_name(v)) throw UsageError("--name: '" + v + "' is not [A-Za-z0-9._-]{1,64}");
      o.name = v;
    } else if (a == "--key") {
      o.key_path = v;
    } else if (a == "--listen") {
      std::string host;
      uint16_t port = 0;
      if (v.find(':') != std::string::npos && (v.front() == '[' || v.find(':') == v.rfind(':'))) {
        if (!util::split_host_port(v, &host, &port)) throw UsageError("--listen: '" + v + "' is not ADDRESS:PORT");
        o.host = host;
        o.port = port;
      } else {
        o.host = v;
      }
    } else if (a == "--sessions") {
      o.sessions = count("--sessions", v, 1, 1000000);
    } else {
      throw UsageError("unknown option '" + a + "'");
    }
  }
  if (o.name.empty()) throw UsageError("--name is required (the name in the coordinator's hosts file)");
  if (o.key_path.empty()) throw UsageError("--key is required");
  return o;
}

}  // namespace nasd::bench
