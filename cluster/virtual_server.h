// A virtual server: an NFS service address (host, NFS port, MOUNT port) that belongs to whoever
// serves its volumes, as the EVSs of an HNAS cluster do. Each node has one (its [node] listen
// address); after a takeover the survivor serves the partner's as well, so the partner's
// clients reconnect to the same address and carry on. Every virtual server of a node carries
// the same NFS and MOUNT programs, so any of them reaches every volume.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/rpc/rpc_server.h"
#include "server/rpc/service.h"

namespace nasd::cluster {

class VirtualServer {
 public:
  // `register_rpcbind`: announce the programs to the local rpcbind (one node per machine does).
  VirtualServer(std::string name, rpc::RpcServerOptions options,
                std::vector<std::shared_ptr<rpc::Service>> services, bool register_rpcbind);
  ~VirtualServer();  // release()

  // Binds and serves now. False (and the reason logged) when the address cannot be bound.
  bool bind();
  // Serves the address as soon as it can be bound: a partner that is letting it go (failback)
  // or a hung one that still holds it is retried every `retry` until bound or released.
  void claim(std::chrono::milliseconds retry = std::chrono::milliseconds(200));
  // Stops serving (connections dropped, running procedures finish) and stops claiming.
  void release();
  bool bound() const;

  const std::string& name() const { return name_; }
  // "a 127.0.0.1 nfs 2049 mount 20048" (no lock taken)
  std::string describe() const;

 private:
  bool try_bind_locked(bool log_failure);
  void claimer(std::chrono::milliseconds retry);

  const std::string name_;
  const rpc::RpcServerOptions options_;
  const std::vector<std::shared_ptr<rpc::Service>> services_;
  const bool register_rpcbind_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unique_ptr<rpc::RpcServer> server_;  // a server runs once: a new one per bind
  bool claimed_ = false;
  std::thread claimer_;
};

}  // namespace nasd::cluster
