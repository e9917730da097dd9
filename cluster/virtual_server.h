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

#include "cluster/address/hosted_address.h"
#include "server/rpc/rpc_server.h"
#include "server/rpc/service.h"

namespace nasd::cluster {

class VirtualServer {
 public:
  // `register_rpcbind`: announce the programs to the local rpcbind (one node per machine does).
  // `on_interface`: the address is put on an interface by the node that serves it (before the
  // bind: probed, added, announced) and removed when it lets go (before the listeners stop);
  // null for an address that is on the host already (loopback), which is only bound.
  VirtualServer(std::string name, rpc::RpcServerOptions options,
                std::vector<std::shared_ptr<rpc::Service>> services, bool register_rpcbind,
                std::unique_ptr<address::HostedAddress> on_interface = nullptr);
  ~VirtualServer();  // release()

  // Binds and serves now (after putting the address on its interface). False (and the reason
  // logged) when the address cannot be taken or bound.
  bool bind();
  // Serves the address as soon as it can be bound: a partner that is letting it go (failback)
  // or a hung one that still holds it is retried every `retry` until bound or released.
  void claim(std::chrono::milliseconds retry = std::chrono::milliseconds(200));
  // Stops serving (connections dropped, running procedures finish) and stops claiming; an
  // address on an interface is removed first.
  void release();
  bool bound() const;
  // An address on an interface held here is announced once more (HostedAddress::announce_again);
  // nothing otherwise.
  void announce_again();
  // " on eth1" while this node holds the address on an interface, else "".
  std::string where() const;

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
  const std::unique_ptr<address::HostedAddress> on_interface_;  // guarded by mu_
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unique_ptr<rpc::RpcServer> server_;  // a server runs once: a new one per bind
  bool claimed_ = false;
  std::thread claimer_;
};

}  // namespace nasd::cluster
