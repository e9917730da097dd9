// A virtual server: an NFS service address (host, NFS port, MOUNT port) that belongs to whoever
// serves its volumes, as the EVSs of an HNAS cluster do. Each node has one (its [node] listen
// address); after a takeover the survivor serves the partner's as well, so the partner's
// clients reconnect to the same address and carry on. Every virtual server of a node carries
// the same NFS and MOUNT programs, so any of them reaches every volume.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/rpc/rpc_server.h"
#include "server/rpc/service.h"

namespace nasd::cluster {

class VirtualServer {
 public:
  // `register_rpcbind`: announce the programs to the local rpcbind (one node per machine does).
  VirtualServer(std::string name, rpc::RpcServerOptions options,
                std::vector<std::shared_ptr<rpc::Service>> services, bool register_rpcbind);
  ~VirtualServer();  // unbind()

  // Starts answering on the address. While another process still holds it (a partner letting
  // go) it retries for up to `patience`. False when it could not bind (logged).
  bool bind(std::chrono::milliseconds patience);
  // Closes the address: connections are dropped, running procedures finish.
  void unbind();
  bool bound() const;

  const std::string& name() const { return name_; }
  // "a 127.0.0.1 nfs 2049 mount 20048" (no lock taken)
  std::string describe() const;

 private:
  const std::string name_;
  const rpc::RpcServerOptions options_;
  const std::vector<std::shared_ptr<rpc::Service>> services_;
  const bool register_rpcbind_;
  mutable std::mutex mu_;
  std::unique_ptr<rpc::RpcServer> server_;  // a server runs once: a new one per bind
  std::string last_error_;
};

}  // namespace nasd::cluster
