#include "tests/e2e/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace nasd::e2e {
namespace {

int open_for_append(const std::filesystem::path& p) {
  return open(p.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

}  // namespace

ChildProcess ChildProcess::spawn(const std::vector<std::string>& argv,
                                 const std::filesystem::path& log,
                                 const std::optional<std::filesystem::path>& stdout_path) {
  if (argv.empty()) throw std::invalid_argument("spawn: empty argv");
  int log_fd = open_for_append(log);
  if (log_fd < 0) throw std::runtime_error("open " + log.string() + ": " + std::strerror(errno));
  int out_fd = log_fd;
  if (stdout_path) {
    out_fd = open(stdout_path->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out_fd < 0) {
      close(log_fd);
      throw std::runtime_error("open " + stdout_path->string() + ": " + std::strerror(errno));
    }
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t parent = getpid();

  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // Child: only async-signal-safe calls from here on.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    setpgid(0, 0);  // own process group, so a terminal ^C reaches the test, not the server
    int null_fd = open("/dev/null", O_RDONLY);
    dup2(null_fd, 0);
    dup2(out_fd, 1);
    dup2(log_fd, 2);
    execvp(args[0], args.data());
    const char msg[] = "exec failed\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(127);
  }
  close(log_fd);
  if (out_fd != log_fd) close(out_fd);
  ChildProcess c;
  c.pid_ = pid;
  return c;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& o) noexcept {
  if (this != &o) {
    kill9();
    pid_ = o.pid_;
    status_ = o.status_;
    o.pid_ = -1;
  }
  return *this;
}

ChildProcess::~ChildProcess() { kill9(); }

bool ChildProcess::exited() {
  if (pid_ < 0) return true;
  int st = 0;
  pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_ || (r < 0 && errno == ECHILD)) {
    status_ = st;
    pid_ = -1;
    return true;
  }
  return false;
}

bool ChildProcess::wait_for_exit(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!exited()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

void ChildProcess::terminate(std::chrono::milliseconds grace) {
  if (exited()) return;
  kill(pid_, SIGTERM);
  if (!wait_for_exit(grace)) kill9();
}

void ChildProcess::kill9() {
  if (exited()) return;
  kill(pid_, SIGKILL);
  int st = 0;
  while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  status_ = st;
  pid_ = -1;
}

std::string ChildProcess::describe_status() const {
  if (pid_ >= 0) return "running";
  if (WIFEXITED(status_)) return "exit " + std::to_string(WEXITSTATUS(status_));
  if (WIFSIGNALED(status_)) return "signal " + std::to_string(WTERMSIG(status_));
  return "status " + std::to_string(status_);
}

bool ChildProcess::exited_cleanly() const {
  return pid_ < 0 && WIFEXITED(status_) && WEXITSTATUS(status_) == 0;
}

CommandResult run_command(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                          const std::filesystem::path& scratch_dir,
                          const std::optional<std::filesystem::path>& stdout_path) {
  static std::atomic<int> counter{0};
  auto out = scratch_dir / ("cmd-" + std::to_string(getpid()) + "-" + std::to_string(++counter) +
                            ".out");
  std::filesystem::remove(out);
  ChildProcess child = ChildProcess::spawn(argv, out, stdout_path);
  CommandResult r;
  if (!child.wait_for_exit(timeout)) {
    r.timed_out = true;
    child.kill9();
  }
  int st = child.status();
  r.exit_code = (!r.timed_out && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  r.output = ss.str();
  std::filesystem::remove(out);
  return r;
}

std::string find_executable(const std::string& name) {
  if (name.find('/') != std::string::npos)
    return access(name.c_str(), X_OK) == 0 ? name : std::string();
  const char* env = std::getenv("PATH");
  std::string path = std::string(env ? env : "") + ":/usr/sbin:/sbin:/usr/bin:/bin";
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

std::string file_tail(const std::filesystem::path& p, size_t bytes) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  auto size = static_cast<size_t>(in.tellg());
  in.seekg(size > bytes ? static_cast<std::streamoff>(size - bytes) : 0);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace nasd::e2e
