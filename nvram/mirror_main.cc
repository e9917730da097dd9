// nasd-mirror: the partner end of the NVRAM mirror link, as a process.
//   nasd-mirror --listen 127.0.0.1:7070 --file mirror.img [--mode process|host] [--log-level L]
//   nasd-mirror --dump FILE
// With --listen it prints "listening on HOST:PORT" once bound (port 0 picks a free one) and
// serves until SIGTERM or SIGINT.
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <thread>

#include "nvram/dump.h"
#include "util/log.h"
#include "nvram/mirror_server.h"
#include "util/net.h"
#include "nvram/region.h"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: nasd-mirror --listen HOST:PORT --file REGION [--mode process|host]\n"
               "                   [--log-level debug|info|warn|error|off]\n"
               "       nasd-mirror --dump REGION\n");
  return 2;
}

int dump(const std::string& path) {
  auto region = nasd::nvram::Region::open_read_only(path);
  std::fputs(nasd::nvram::dump_region(*region).c_str(), stdout);
  return 0;
}

int serve(const std::string& address, const std::string& path, nasd::nvram::DurabilityMode mode) {
  std::string host;
  uint16_t port;
  if (!nasd::util::split_host_port(address, &host, &port)) {
    std::fprintf(stderr, "nasd-mirror: --listen wants HOST:PORT, not '%s'\n", address.c_str());
    return 2;
  }
  // Signals are taken synchronously by a dedicated thread, which stops the server cleanly.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  nasd::nvram::MirrorServer server(path, mode);
  uint16_t bound = server.listen(host, port);
  std::printf("listening on %s:%u\n", host.c_str(), bound);
  std::fflush(stdout);
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    server.stop();
  });
  server.serve();
  waiter.join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string listen, file, dump_file, mode = "process", level = "info";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    bool ok = (a == "--listen" && value(&listen)) || (a == "--file" && value(&file)) ||
              (a == "--mode" && value(&mode)) || (a == "--dump" && value(&dump_file)) ||
              (a == "--log-level" && value(&level));
    if (!ok) return usage();
  }
  auto log_level = nasd::util::parse_log_level(level);
  if (!log_level) return usage();
  nasd::util::set_log_level(*log_level);
  try {
    if (!dump_file.empty()) return dump(dump_file);
    if (listen.empty() || file.empty() || (mode != "process" && mode != "host")) return usage();
    return serve(listen, file,
                 mode == "host" ? nasd::nvram::DurabilityMode::Host
                                : nasd::nvram::DurabilityMode::Process);
  } catch (const std::exception& e) {
    nasd::util::log("nvram").error(e.what());
    return 1;
  }
}
