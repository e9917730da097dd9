#include "tests/nvram/mirror_process.h"

#include "tests/nvram/test_util.h"

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <vector>

extern char** environ;

namespace nasd::nvram::testing {

namespace {

// Spawns `argv` with stdout on a pipe; returns the pid and the read end.
pid_t spawn_with_stdout(std::vector<std::string> args, int* out_fd) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    throw std::runtime_error("cannot start " + args[0]);
  }
  *out_fd = fds[0];
  return pid;
}

}  // namespace

MirrorProcess::MirrorProcess(const std::string& region, uint16_t port) {
  // The key of test_link_credentials(), in a file for the process.
  const std::string key_file = region + ".key";
  {
    std::ofstream key(key_file, std::ios::binary | std::ios::trunc);
    const auto bytes = test_link_credentials().key;
    key.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  ::chmod(key_file.c_str(), 0600);  // nasd-mirror refuses a key others can read
  int out;
  pid_ = spawn_with_stdout({NASD_MIRROR_BIN, "--listen", "127.0.0.1:" + std::to_string(port),
                            "--file", region, "--key", key_file},
                           &out);
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd p{out, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[256];
    ssize_t n = read(out, buf, sizeof buf);
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  close(out);
  auto colon = line.rfind(':');
  if (line.rfind("listening on ", 0) != 0 || colon == std::string::npos) {
    kill_now();
    throw std::runtime_error("nasd-mirror did not start: '" + line + "'");
  }
  port_ = static_cast<uint16_t>(std::stoi(line.substr(colon + 1)));
}

MirrorProcess::~MirrorProcess() { kill_now(); }

void MirrorProcess::kill_now() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void MirrorProcess::terminate() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void MirrorProcess::freeze() {
  if (pid_ > 0) ::kill(pid_, SIGSTOP);
}

std::string MirrorProcess::dump(const std::string& region) {
  int out;
  pid_t pid = spawn_with_stdout({NASD_MIRROR_BIN, "--dump", region}, &out);
  std::string text;
  char buf[65536];
  ssize_t n;
  while ((n = read(out, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  close(out);
  waitpid(pid, nullptr, 0);
  return text;
}

}  // namespace nasd::nvram::testing
