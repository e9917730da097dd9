#include "bench/agent_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>

#include "bench/agent_channel.h"
#include "bench/agent_session.h"
#include "util/log.h"
#include "util/net.h"

namespace nasd::bench::agent {

AgentServer::AgentServer(AgentServerOptions options, link::Credentials credentials)
    : options_(std::move(options)), credentials_(std::move(credentials)) {}

AgentServer::~AgentServer() {
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

bool AgentServer::listen(std::string* error) {
  listen_fd_ = util::listen_tcp(options_.host, options_.port, &port_, error, 16);
  return listen_fd_ >= 0;
}

void AgentServer::serve() {
  const auto& log = util::log("loadgen");
  while (!stopping_ && (options_.sessions == 0 || served_ < options_.sessions)) {
    if (!util::wait_readable(listen_fd_, std::chrono::milliseconds(200))) continue;
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) {
        log.warn(std::string("agent: accept: ") + std::strerror(errno));
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // EMFILE and the like
      }
      continue;
    }
    const std::string from = util::socket_address_of(peer, len).to_string();
    try {
      serve_connection(fd);  // closes fd
    } catch (const std::exception& e) {
      log.error("agent: the session with " + from + " stopped by an unexpected error: " + e.what());
    } catch (...) {
      log.error("agent: the session with " + from + " stopped by an unexpected error");
    }
  }
}

void AgentServer::serve_connection(int fd) {
  const auto& log = util::log("loadgen");
  std::string error;
  std::optional<link::Session> session = link::authenticate_server(
      fd, link::LinkKind::LoadAgent, credentials_, [](const std::string&) { return true; }, kHandshakeTimeout,
      &error);
  if (!session) {
    // Refused without a word to the peer; the operator sees why.
    log.warn("agent: refused a connection: " + error);
    ::close(fd);
    return;
  }
  Channel channel(fd, std::move(*session));
  ++served_;
  log.info("agent: coordinator '" + channel.peer() + "' connected");
  AgentSession agent(credentials_.self);
  for (;;) {
    std::vector<uint8_t> request;
    util::ReadStatus st = channel.receive(&request, options_.idle_timeout, &error);
    if (st != util::ReadStatus::Ok) {
      if (st != util::ReadStatus::Eof) log.warn("agent: dropping the coordinator: " + error);
      break;
    }
    bool close = false;
    std::vector<uint8_t> reply = agent.handle(request, &close);
    if (!channel.send(reply, &error)) {
      log.warn("agent: cannot answer the coordinator: " + error);
      break;
    }
    if (close) break;
  }
  log.info("agent: session with '" + channel.peer() + "' ended");
}

}  // namespace nasd::bench::agent
