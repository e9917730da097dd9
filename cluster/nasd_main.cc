// nasd: one node of the NAS. `nasd --config FILE` serves until SIGTERM or SIGINT, then stops
// cleanly; kill -9 is survived by the NVRAM journal and the log-structured volumes. SIGHUP
// reloads the exports from FILE (as `nasd-admin exports reload`).
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <string>

#include "cluster/node.h"
#include "util/config.h"
#include "util/log.h"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: nasd --config FILE [--log-level debug|info|warn|error|off]\n"
               "  Serves NFSv3 and MOUNT v3 for the volumes and exports in FILE until SIGTERM.\n"
               "  SIGHUP re-reads the exports from FILE.\n"
               "  See deploy/nasd.conf for the format. --log-level overrides [node] log_level.\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  std::optional<nasd::util::LogLevel> log_level;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if ((a == "--config" || a == "-c") && i + 1 < argc) {
      config_path = argv[++i];
    } else if (a.rfind("--config=", 0) == 0) {
      config_path = a.substr(9);
    } else if (a == "--log-level" && i + 1 < argc) {
      log_level = nasd::util::parse_log_level(argv[++i]);
      if (!log_level) {
        std::fprintf(stderr, "nasd: --log-level wants debug, info, warn, error or off\n");
        return 2;
      }
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "nasd: unknown argument '%s'\n", a.c_str());
      usage(stderr);
      return 2;
    }
  }
  if (config_path.empty()) {
    usage(stderr);
    return 2;
  }

  // Block the stop signals in every thread; the main thread waits for them below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const nasd::util::Logger& log = nasd::util::log("cluster");
  try {
    nasd::cluster::Node node(nasd::Config::load(config_path));
    nasd::util::set_log_level(log_level.value_or(node.options().log_level));
    node.start();
    log.info("node " + node.options().name + " serving (config " + config_path + ")");
    int sig = 0;
    for (;;) {
      sigwait(&stop_signals, &sig);
      if (sig != SIGHUP) break;
      try {
        node.reload_exports();  // logs what it did, or why the file was refused
      } catch (const std::exception&) {
        // The old exports stay in force; the reason is in the log already.
      }
    }
    log.info(std::string(strsignal(sig)) + " received, stopping");
    node.stop();
    log.info("stopped cleanly");
  } catch (const std::exception& e) {
    log.error(e.what());
    return 1;
  }
  return 0;
}
