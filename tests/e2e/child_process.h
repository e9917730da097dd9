// Starting and stopping the external programs the suite drives (the server under test, rpcbind,
// dumpcap, the libnfs command-line tools). Children die with the test process (PDEATHSIG), so a
// crashed or killed test never leaves a server behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace nasd::e2e {

class ChildProcess {
 public:
  // Starts argv[0] (searched in PATH) with stdout and stderr appended to `log`.
  // `stdout_path`, when given, receives stdout instead.
  static ChildProcess spawn(const std::vector<std::string>& argv, const std::filesystem::path& log,
                            const std::optional<std::filesystem::path>& stdout_path = {});

  ChildProcess() = default;
  ChildProcess(ChildProcess&& o) noexcept : pid_(o.pid_), status_(o.status_) { o.pid_ = -1; }
  ChildProcess& operator=(ChildProcess&& o) noexcept;
  ~ChildProcess();  // kills (SIGKILL) a child that is still running

  pid_t pid() const { return pid_; }
  // Reaps without blocking; true once the child has exited (its status is then in status()).
  bool exited();
  // Waits up to `timeout` for the child to exit on its own.
  bool wait_for_exit(std::chrono::milliseconds timeout);
  // SIGTERM, then SIGKILL if it has not exited within `grace`.
  void terminate(std::chrono::milliseconds grace);
  void kill9();
  // Raw waitpid status; meaningful after exited() returned true.
  int status() const { return status_; }
  // "exit 0", "signal 9", ...
  std::string describe_status() const;
  bool exited_cleanly() const;  // exit code 0

 private:
  pid_t pid_ = -1;  // -1 when there is no child or it was reaped
  int status_ = 0;
};

struct CommandResult {
  bool timed_out = false;
  int exit_code = -1;  // -1 when killed by a signal
  std::string output;  // stdout and stderr, interleaved
};

// Runs a command to completion (bounded by `timeout`, then killed). With `stdout_path`, stdout
// goes to that file and `output` holds only stderr.
CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          const std::filesystem::path& scratch_dir,
                          const std::optional<std::filesystem::path>& stdout_path = {});

// Absolute path of an executable found in PATH (or in /usr/sbin, /sbin), or empty.
std::string find_executable(const std::string& name);

// The last `bytes` of a text file ("" when missing).
std::string file_tail(const std::filesystem::path& p, size_t bytes);

}  // namespace nasd::e2e
