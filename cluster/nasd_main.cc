// nasd: one node of the NAS. `nasd --config FILE` serves until SIGTERM or SIGINT, then stops
// cleanly; kill -9 is survived by the NVRAM journal and the log-structured volumes. SIGHUP
// reloads the exports from FILE (as `nasd-admin exports reload`).
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cluster/node.h"
#include "util/config.h"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: nasd --config FILE\n"
               "  Serves NFSv3 and MOUNT v3 for the volumes and exports in FILE until SIGTERM.\n"
               "  SIGHUP re-reads the exports from FILE.\n"
               "  See deploy/nasd.conf for the format.\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if ((a == "--config" || a == "-c") && i + 1 < argc) {
      config_path = argv[++i];
    } else if (a.rfind("--config=", 0) == 0) {
      config_path = a.substr(9);
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

  try {
    nasd::cluster::Node node(nasd::Config::load(config_path));
    node.start();
    std::fprintf(stderr, "nasd: node %s serving (config %s)\n", node.options().name.c_str(),
                 config_path.c_str());
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
    std::fprintf(stderr, "nasd: %s received, stopping\n", strsignal(sig));
    node.stop();
    std::fprintf(stderr, "nasd: stopped cleanly\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nasd: %s\n", e.what());
    return 1;
  }
  return 0;
}
