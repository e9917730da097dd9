// The server under test as a child process: a fresh data dir and config under a scratch folder,
// free loopback ports, bounded start-up (waits for the NFS and MOUNT ports), clean stop
// (SIGTERM, SIGKILL after a grace period), restart on the same data dir and ports, and kill -9.
//
// Which server runs comes from the environment (see ServerChoice::from_environment), so the
// same suite validates itself against nfs-ganesha and then judges nasd.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "tests/e2e/child_process.h"
#include "tests/e2e/server_config.h"

namespace nasd::e2e {

enum class ServerKind { Nasd, Ganesha };

struct ServerChoice {
  ServerKind kind = ServerKind::Nasd;
  std::string binary;        // nasd or ganesha.nfsd
  std::string admin_binary;  // nasd-admin; empty when unknown (or ganesha)

  // NASD_E2E_SERVER=ganesha selects nfs-ganesha (NASD_GANESHA_BIN overrides the binary);
  // otherwise nasd from NASD_BIN or the build's own `nasd` target. NASD_ADMIN_BIN or the
  // build's `nasd-admin` target gives the admin tool. nullopt (with the reason) when no server
  // binary is configured at all; throws when one is configured but unusable.
  static std::optional<ServerChoice> from_environment(std::string* why_not);
  const char* name() const { return kind == ServerKind::Nasd ? "nasd" : "nfs-ganesha"; }
};

class ServerProcess {
 public:
  // Lays out `root` (data dir, config, log) and picks ports; start() launches.
  ServerProcess(ServerChoice choice, std::filesystem::path root);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // Starts the server and waits (bounded) until NFS and MOUNT answer a NULL call on their
  // ports. Throws with the tail of the server log when it exits early or never answers.
  void start();
  // SIGTERM, SIGKILL after `grace`. True when the server exited with status 0 by itself.
  bool stop(std::chrono::milliseconds grace = std::chrono::seconds(15));
  // SIGKILL: what a crash looks like to the data dir. Returns once the ports are closed.
  void kill9();
  // stop() then start(): same data dir, same ports. Returns stop()'s verdict.
  bool restart();
  bool running();

  // Replaces the config file (nasd only) with `text`, for tests of other export layouts and
  // of reloading; `text` comes from the layout (nasd_config_text and its variations).
  void rewrite_config(const std::string& text);
  const ServerLayout& layout() const { return layout_; }
  const std::filesystem::path& config_path() const { return config_path_; }
  pid_t pid() const { return child_.pid(); }

  const ServerChoice& choice() const { return choice_; }
  ServerKind kind() const { return choice_.kind; }
  uint16_t nfs_port() const { return layout_.nfs_port; }
  uint16_t mount_port() const { return layout_.mount_port; }
  uint16_t http_port() const { return layout_.http_port; }
  const std::filesystem::path& data_dir() const { return layout_.data_dir; }
  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path admin_socket() const { return layout_.data_dir / "nasd.sock"; }
  // What the last stop() or kill9() saw ("exit 0", "signal 9").
  std::string last_exit() const { return last_exit_; }
  std::string log_tail(size_t bytes = 6000) const;

  // nfs://127.0.0.1/r/v0<path>?nfsport=P&mountport=Q&version=3[&extra]
  std::string url(const std::string& path = "", const std::string& extra_query = "") const;

 private:
  void write_config();
  void wait_until_ready(std::chrono::milliseconds timeout);

  ServerChoice choice_;
  std::filesystem::path root_;
  std::filesystem::path config_path_;
  std::filesystem::path log_path_;
  ServerLayout layout_;
  ChildProcess child_;
  std::string last_exit_;
};

}  // namespace nasd::e2e
