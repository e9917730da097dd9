// `nasd-loadgen agent`: a load-generating host waiting for a coordinator. It listens on one TCP
// address and serves one coordinator at a time: the link handshake with the agent key first
// (agent_channel.h; a connection that fails it is closed without a word), then the requests of
// agent_protocol.h, each answered by an AgentSession. A second coordinator waits in the listen
// backlog until the first one is done. Nothing a peer sends can end the process: every length
// is bounded before use and every exception is caught per connection.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "util/link_handshake.h"

namespace nasd::bench::agent {

struct AgentServerOptions {
  std::string host = "0.0.0.0";  // numeric
  uint16_t port = 7460;
  size_t sessions = 0;           // serve this many authenticated sessions, then return (0: forever)
  // How long an authenticated coordinator may stay silent between requests (it may be waiting
  // for a slow agent's fileset build).
  std::chrono::milliseconds idle_timeout{std::chrono::hours(6)};
};

class AgentServer {
 public:
  AgentServer(AgentServerOptions options, link::Credentials credentials);
  ~AgentServer();
  // Binds the listener; false and *error when it cannot.
  bool listen(std::string* error);
  uint16_t port() const { return port_; }
  // Accepts and serves connections until stop() or the session count is reached.
  void serve();
  void stop() { stopping_ = true; }

 private:
  void serve_connection(int fd);

  AgentServerOptions options_;
  link::Credentials credentials_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  size_t served_ = 0;
  std::atomic<bool> stopping_{false};
};

}  // namespace nasd::bench::agent
