// The control socket: a Unix domain socket where nasd-admin sends one command per connection
// and reads back the text. Served by one small thread, one connection at a time; admin
// commands are rare and short, so nothing here competes with the NFS path. The socket file is
// created mode 0600 (commands can reset statistics and more) and removed on stop().
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "server/admin/command_registry.h"

namespace nasd::admin {

class ControlSocket {
 public:
  // `registry` must outlive the socket.
  ControlSocket(std::string path, CommandRegistry& registry);
  ~ControlSocket();  // stop()
  ControlSocket(const ControlSocket&) = delete;
  ControlSocket& operator=(const ControlSocket&) = delete;

  // Binds the socket (replacing a stale socket file from an earlier run, refusing to replace
  // anything else) and starts the thread. Throws std::system_error / std::runtime_error.
  void start();
  void stop();
  const std::string& path() const { return path_; }

 private:
  void serve();
  void handle(int fd);

  std::string path_;
  CommandRegistry& registry_;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  std::thread thread_;
};

}  // namespace nasd::admin
