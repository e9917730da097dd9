// nasd: one node of the NAS. `nasd --config FILE` serves until SIGTERM or SIGINT, then stops
// cleanly; kill -9 is survived by the NVRAM journal and the log-structured volumes. SIGHUP
// reloads the exports from FILE (as `nasd-admin exports reload`).
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <optional>
#include <string>

#include "cluster/address/address_record.h"
#include "cluster/address/hosted_address.h"
#include "cluster/data_dir_lock.h"
#include "cluster/node.h"
#include "cluster/node_options.h"
#include "util/config.h"
#include "util/log.h"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: nasd --config FILE [--log-level debug|info|warn|error|off]\n"
               "       nasd --config FILE --remove-addresses\n"
               "  Serves NFSv3 and MOUNT v3 for the volumes and exports in FILE until SIGTERM.\n"
               "  SIGHUP re-reads the exports from FILE.\n"
               "  --remove-addresses: with the node not running, removes the EVS and pool\n"
               "  addresses it left on interfaces (a service manager's stop hook after a crash).\n"
               "  See deploy/nasd.conf for the format. --log-level overrides [node] log_level.\n");
}

// The addresses a node that is not running left on interfaces (<data_dir>/interface-addresses),
// removed now rather than at its next start: systemd's ExecStopPost runs this after any end of
// the process, kill -9 included, so a host that outlives its nasd stops answering for them.
int remove_addresses(const std::string& config_path) {
  try {
    const nasd::cluster::NodeOptions o = nasd::cluster::NodeOptions::from_config(nasd::Config::load(config_path));
    nasd::cluster::DataDirLock lock(o.data_dir);  // refuses while the node runs
    const std::string path = o.in_data_dir("interface-addresses");
    nasd::cluster::address::AddressRecord record(path);
    for (const std::string& line : nasd::cluster::address::remove_leftover_addresses(record))
      std::printf("%s\n", line.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nasd: --remove-addresses: %s\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path;
  std::optional<nasd::util::LogLevel> log_level;
  bool remove_addresses_only = false;
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
    } else if (a == "--remove-addresses") {
      remove_addresses_only = true;
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
  if (remove_addresses_only) return remove_addresses(config_path);

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
