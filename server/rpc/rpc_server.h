// The ONC RPC server: listeners, io_uring event loops, executor threads, the duplicate request
// cache, statistics and rpcbind registration, wired together. Knows nothing about NFS: the
// programs it carries are Services added before start().
//
//   nasd::rpc::RpcServer server(options);          // e.g. rpc_server_options_from_config()
//   server.add_service(nfs);                       // before start()
//   server.add_service(mount);
//   server.start();                                // throws on bind/listen/io_uring failure
//   server.register_with_rpcbind(100003, 3, 2049); // after start(), per program version
//   ...
//   server.stop();                                 // also in the destructor
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "server/rpc/call_dispatcher.h"
#include "server/rpc/call_stats.h"
#include "server/rpc/connection_limiter.h"
#include "server/rpc/duplicate_request_cache.h"
#include "server/rpc/event_loop.h"
#include "server/rpc/rpcbind_registration.h"
#include "server/rpc/service.h"
#include "server/rpc/tcp_connection.h"
#include "util/task_queue.h"

namespace nasd::rpc {

class TcpAcceptor;
class UdpEndpoint;

struct RpcServerOptions {
  std::string bind_address = "127.0.0.1";
  // Every service is reachable on every port. Port 0 picks a free port (see bound_ports()).
  std::vector<uint16_t> ports = {2049, 20048};
  bool udp = true;            // also serve UDP on the same port numbers
  unsigned workers = 0;       // event loops; 0 = one per core
  unsigned threads = 16;      // executor threads running procedures
  // Run-to-completion: a call the service can answer without waiting runs on the event loop
  // that received it (Service::dispatch_inline); false sends every call to the executor.
  bool run_inline = true;
  TcpLimits tcp;              // max_record, per-connection in-flight bound
  size_t udp_max_in_flight = 1024;  // per loop and UDP socket
  bool duplicate_request_cache = true;
  DuplicateRequestCache::Options drc;
  // The node's one cache, shared by the servers of its virtual addresses so that replies
  // rebuilt from the journal (a takeover) are found whichever address a client retransmits
  // to; this server's own cache (of `drc` options) when null.
  std::shared_ptr<DuplicateRequestCache> shared_drc;
  RpcbindRegistration::Options rpcbind;
  // Counters to add to, shared by the servers of one node (each virtual server address has its
  // own RpcServer); a server of its own when null.
  std::shared_ptr<CallStats> stats;
  // The connection caps, likewise shareable; made from `tcp`'s caps when null.
  std::shared_ptr<ConnectionLimiter> connections;
};

class RpcServer {
 public:
  explicit RpcServer(RpcServerOptions options);
  ~RpcServer();  // stop()
  RpcServer(const RpcServer&) = delete;
  RpcServer& operator=(const RpcServer&) = delete;

  // Before start(). Throws std::invalid_argument for a program added twice.
  void add_service(std::shared_ptr<Service> service);

  // Binds every port, then starts the loops and executor. Throws std::system_error (bind,
  // io_uring) or std::invalid_argument (bad address); nothing keeps running after a throw.
  // A server runs once: start() after stop() throws std::logic_error.
  void start();
  // Stops accepting, closes connections, lets executing procedures finish, joins all threads
  // and unregisters from rpcbind. Idempotent.
  void stop();
  bool running() const { return running_; }

  // Registers one program version on `port` (TCP, and UDP when enabled) according to the
  // rpcbind mode. Returns false when skipped; throws in mode on when it fails.
  bool register_with_rpcbind(uint32_t prog, uint32_t vers, uint16_t port);

  // After start(): the ports actually bound, in options order (resolves port 0).
  const std::vector<uint16_t>& bound_ports() const { return bound_ports_; }
  CallStats& stats() { return *stats_; }
  const CallStats& stats() const { return *stats_; }
  DuplicateRequestCache& duplicate_request_cache() {
    return options_.shared_drc ? *options_.shared_drc : drc_;
  }
  const RpcServerOptions& options() const { return options_; }

 private:
  struct Listener {
    uint16_t port;
    int tcp_fd = -1;
    int udp_fd = -1;
  };
  struct Worker;

  void bind_listeners();
  void close_listeners();
  void note(const std::string& text) const;

  RpcServerOptions options_;
  // Declaration order is teardown order in reverse: everything a loop task can touch
  // (stats, cache, executor, dispatcher) outlives the workers.
  std::shared_ptr<CallStats> stats_;
  std::shared_ptr<ConnectionLimiter> connections_;
  DuplicateRequestCache drc_;
  std::unique_ptr<util::TaskQueue> executor_;  // runs procedures; stop() runs what is queued
  CallDispatcher dispatcher_;
  RpcbindRegistration rpcbind_;
  std::vector<Listener> listeners_;
  std::vector<uint16_t> bound_ports_;
  std::vector<std::unique_ptr<Worker>> workers_;
  bool running_ = false;
  bool stopped_ = false;
};

}  // namespace nasd::rpc
