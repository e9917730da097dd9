// Runs the real nasd-mirror executable for a test, on a free loopback port.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace nasd::nvram::testing {

class MirrorProcess {
 public:
  // Starts `nasd-mirror --listen 127.0.0.1:<port> --file <region>`; port 0 picks a free one.
  // Throws std::runtime_error when it does not come up.
  MirrorProcess(const std::string& region, uint16_t port = 0);
  ~MirrorProcess();  // SIGKILLs it if still running

  uint16_t port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  void kill_now();   // SIGKILL, like a crashed partner
  void terminate();  // SIGTERM and wait: a clean stop
  void freeze();     // SIGSTOP: a partner that hangs (it holds only what it wrote before)

  // Output of `nasd-mirror --dump <region>`.
  static std::string dump(const std::string& region);

 private:
  pid_t pid_ = -1;
  uint16_t port_ = 0;
};

}  // namespace nasd::nvram::testing
