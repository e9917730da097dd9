// nasd-loadgen: a SPECsfs2008-style NFSv3 load generator. See options.cc for the command line.
#include <fstream>
#include <iostream>
#include <unistd.h>

#include "bench/agent_channel.h"
#include "bench/agent_hosts.h"
#include "bench/agent_server.h"
#include "bench/benchmark.h"
#include "bench/coordinator.h"
#include "bench/csv_writer.h"
#include "bench/options.h"
#include "bench/plot.h"
#include "bench/progress_line.h"
#include "bench/report_writer.h"

namespace {

using namespace nasd::bench;

int plot_command(const std::vector<std::string>& args) {
  if (args.size() < 2) {
    std::cerr << "usage: nasd-loadgen plot results.csv [more.csv ...] out.png|out.svg\n";
    return 2;
  }
  std::vector<std::string> csvs(args.begin(), args.end() - 1);
  std::string error;
  try {
    if (run_gnuplot(csvs, args.back(), &error) != 0) {
      std::cerr << "nasd-loadgen plot: " << error << '\n';
      return 1;
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "nasd-loadgen " << e.what() << '\n';
    return 2;
  }
  return 0;
}

bool write_file(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  std::ofstream f(path);
  if (!f) {
    std::cerr << "nasd-loadgen: cannot write " << path << '\n';
    return false;
  }
  fill(f);
  return static_cast<bool>(f);
}

int run_command(const std::vector<std::string>& args) {
  Options o;
  try {
    o = parse_options(args);
  } catch (const UsageError& e) {
    std::cerr << "nasd-loadgen: " << e.what() << "\n\n" << usage();
    return 2;
  }
  if (o.help) {
    std::cout << usage();
    return 0;
  }
  bool tty = isatty(STDERR_FILENO);
  ProgressFn progress;
  if (!o.quiet) {
    progress = [tty](const Progress& p) {
      // On a terminal the line rewrites itself; in a log every update is its own line.
      std::cerr << (tty ? "\r\033[K" : "") << format_progress(p) << (tty ? "" : "\n") << std::flush;
    };
  }
  RunResult result;
  try {
    if (o.agents_path.empty()) {
      result = run_benchmark(o.config, progress);
    } else {
      std::vector<AgentHost> hosts;
      nasd::link::Credentials credentials;
      try {
        hosts = load_agent_hosts(o.agents_path);
        credentials = nasd::bench::agent::agent_credentials(o.agent_key_path, o.coordinator_name);
      } catch (const std::exception& e) {
        std::cerr << "nasd-loadgen: " << e.what() << '\n';
        return 2;
      }
      result = run_distributed(o.config, hosts, credentials, progress);
    }
  } catch (const RunError& e) {
    if (!o.quiet && tty) std::cerr << '\n';
    std::cerr << "nasd-loadgen: " << e.what() << '\n';
    return 1;
  }
  if (!o.quiet && tty) std::cerr << '\n';
  bool ok = true;
  if (o.report_path.empty()) {
    write_report(std::cout, o.config, result, o.labels);
  } else {
    ok &= write_file(o.report_path, [&](std::ostream& f) { write_report(f, o.config, result, o.labels); });
  }
  if (!o.csv_path.empty()) ok &= write_file(o.csv_path, [&](std::ostream& f) { write_csv(f, result); });
  if (!o.plot_path.empty()) {
    std::string error;
    if (run_gnuplot({o.csv_path}, o.plot_path, &error) != 0) {
      std::cerr << "nasd-loadgen: plot: " << error << '\n';
      ok = false;
    }
  }
  for (const std::string& f : result.failures) std::cerr << "nasd-loadgen: invalid run: " << f << '\n';
  if (!result.cleanup_error.empty()) {
    std::cerr << "nasd-loadgen: --cleanup failed: " << result.cleanup_error << '\n';
    ok = false;
  }
  return ok && result.failures.empty() ? 0 : 1;
}

// `nasd-loadgen fileset-bytes RUN OPTIONS`: the bytes of file data the run would create on each
// target (all processes), so a script can size a volume before it starts the server.
int fileset_bytes_command(const std::vector<std::string>& args) {
  Options o;
  try {
    o = parse_options(args);
  } catch (const UsageError& e) {
    std::cerr << "nasd-loadgen fileset-bytes: " << e.what() << '\n';
    return 2;
  }
  std::cout << planned_fileset(o.config).bytes() * o.config.processes << '\n';
  return 0;
}

}  // namespace

int agent_command(const std::vector<std::string>& args) {
  AgentOptions o;
  try {
    o = parse_agent_options(args);
  } catch (const UsageError& e) {
    std::cerr << "nasd-loadgen agent: " << e.what() << "\n\n" << agent_usage();
    return 2;
  }
  if (o.help) {
    std::cout << agent_usage();
    return 0;
  }
  try {
    nasd::bench::agent::AgentServerOptions so;
    so.host = o.host;
    so.port = o.port;
    so.sessions = o.sessions;
    nasd::bench::agent::AgentServer server(so, nasd::bench::agent::agent_credentials(o.key_path, o.name));
    std::string error;
    if (!server.listen(&error)) {
      std::cerr << "nasd-loadgen agent: " << error << '\n';
      return 1;
    }
    // One line a script can wait for, as the server launchers print TARGET.
    std::cout << "AGENT " << o.name << " listening on " << o.host << ":" << server.port() << std::endl;
    server.serve();
  } catch (const std::exception& e) {
    std::cerr << "nasd-loadgen agent: " << e.what() << '\n';
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "agent") return agent_command({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "plot") return plot_command({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "fileset-bytes") return fileset_bytes_command({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "run") args.erase(args.begin());
  return run_command(args);
}
