#include "server/rpc/rpc_server.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>

#include "util/net.h"
#include "server/rpc/tcp_acceptor.h"
#include "server/rpc/udp_endpoint.h"
#include "util/log.h"
#include "util/contained_thread.h"

namespace nasd::rpc {
namespace {

// How often start() retries when port 0 got a TCP port whose UDP twin is taken.
constexpr int kEphemeralBindAttempts = 16;

}  // namespace

// One event loop, its thread, and the acceptors and endpoints it runs.
struct RpcServer::Worker {
  EventLoop loop;
  std::vector<std::unique_ptr<TcpAcceptor>> acceptors;
  std::vector<std::unique_ptr<UdpEndpoint>> endpoints;
  std::thread thread;
};

RpcServer::RpcServer(RpcServerOptions options)
    : options_(std::move(options)),
      stats_(options_.stats ? options_.stats : std::make_shared<CallStats>()),
      connections_(options_.connections
                       ? options_.connections
                       : std::make_shared<ConnectionLimiter>(
                             options_.tcp.max_connections,
                             options_.tcp.max_connections_per_address)),
      drc_(options_.drc),
      // The executor exists from construction so that the dispatcher can hold a plain pointer;
      // its threads idle until calls arrive.
      executor_(std::make_unique<util::TaskQueue>(util::TaskQueue::Options{
          .threads = options_.threads ? options_.threads : 16, .room = "rpc"})),
      dispatcher_(executor_.get(),
                  !options_.duplicate_request_cache ? nullptr
                  : options_.shared_drc             ? options_.shared_drc.get()
                                                    : &drc_,
                  stats_.get(), options_.run_inline),
      rpcbind_(options_.rpcbind) {}

RpcServer::~RpcServer() { stop(); }

void RpcServer::note(const std::string& text) const {
  util::log("rpc").warn(text);
}

void RpcServer::add_service(std::shared_ptr<Service> service) {
  if (running_) throw std::logic_error("RpcServer::add_service after start()");
  dispatcher_.add_service(std::move(service));
}

void RpcServer::bind_listeners() {
  for (uint16_t wanted : options_.ports) {
    for (int attempt = 0;; ++attempt) {
      Listener l;
      util::SocketAddress addr = util::parse_socket_address(options_.bind_address, wanted);
      l.tcp_fd = util::open_tcp_listener(addr);
      l.port = util::bound_port(l.tcp_fd);
      if (!options_.udp) {
        listeners_.push_back(l);
        break;
      }
      addr.set_port(l.port);
      try {
        l.udp_fd = util::open_udp_socket(addr);
        listeners_.push_back(l);
        break;
      } catch (const std::system_error& e) {
        ::close(l.tcp_fd);
        if (wanted != 0 || e.code().value() != EADDRINUSE || attempt + 1 >= kEphemeralBindAttempts)
          throw;
      }
    }
  }
  for (const auto& l : listeners_) bound_ports_.push_back(l.port);
}

void RpcServer::close_listeners() {
  for (auto& l : listeners_) {
    if (l.tcp_fd >= 0) ::close(l.tcp_fd);
    if (l.udp_fd >= 0) ::close(l.udp_fd);
  }
  listeners_.clear();
}

void RpcServer::start() {
  if (running_) return;
  if (stopped_) throw std::logic_error("RpcServer::start after stop()");
  try {
    bind_listeners();
    unsigned n = options_.workers ? options_.workers : std::thread::hardware_concurrency();
    if (n == 0) n = 1;
    for (unsigned i = 0; i < n; ++i) {
      auto w = std::make_unique<Worker>();
      for (const auto& l : listeners_) {
        w->acceptors.push_back(std::make_unique<TcpAcceptor>(
            w->loop, l.tcp_fd, l.port, dispatcher_, *stats_, options_.tcp, connections_.get()));
        if (l.udp_fd >= 0)
          w->endpoints.push_back(std::make_unique<UdpEndpoint>(
              w->loop, l.udp_fd, l.port, dispatcher_, *stats_, options_.udp_max_in_flight));
      }
      workers_.push_back(std::move(w));
    }
  } catch (...) {
    workers_.clear();
    close_listeners();
    bound_ports_.clear();
    throw;
  }
  for (auto& w : workers_) {
    Worker* raw = w.get();
    // Operations are armed from the loop's own thread: io_uring submission is single-threaded.
    w->loop.post([raw] {
      for (auto& a : raw->acceptors) a->start();
      for (auto& e : raw->endpoints) e->start();
    });
    w->thread = util::contained_thread("rpc", "event loop", [raw] { raw->loop.run(); });
  }
  int failed = 0;
  for (auto& w : workers_)
    if (int rc = w->loop.wait_started(); rc < 0) failed = rc;
  if (failed < 0) {
    for (auto& w : workers_) w->loop.stop();
    for (auto& w : workers_) w->thread.join();
    workers_.clear();
    close_listeners();
    bound_ports_.clear();
    throw std::system_error(-failed, std::generic_category(), "io_uring_queue_init");
  }
  running_ = true;
}

bool RpcServer::register_with_rpcbind(uint32_t prog, uint32_t vers, uint16_t port) {
  util::SocketAddress addr = util::parse_socket_address(options_.bind_address, port);
  std::string why;
  bool ok = rpcbind_.add(prog, vers, /*tcp=*/true, addr, &why);
  if (ok && options_.udp) ok = rpcbind_.add(prog, vers, /*tcp=*/false, addr, &why);
  if (!ok && options_.rpcbind.mode != RpcbindMode::Off) note(why);
  return ok;
}

void RpcServer::stop() {
  if (!running_) return;
  running_ = false;
  stopped_ = true;
  rpcbind_.remove_all();
  for (auto& w : workers_) w->loop.stop();
  for (auto& w : workers_)
    if (w->thread.joinable()) w->thread.join();
  // Calls parked on a forwarded volume call are dropped when their answer comes (their
  // connections are gone); procedures already running or queued finish (their replies go
  // nowhere); only then may the loops' objects go, since finished calls post to them.
  dispatcher_.close();
  executor_->stop();
  workers_.clear();
  close_listeners();
}

}  // namespace nasd::rpc
