// Serves this node's share of the [pool] addresses (pool_options.h) and follows membership:
// every `interval` it asks which members are alive, applies membership::assign_pool, claims the
// addresses now assigned here (VirtualServer::claim retries while another node still holds one)
// and releases the ones that moved away (a returning home node's). For `startup_grace` after
// start every peer counts as alive, so a starting node takes only its own addresses and never
// those of peers it has simply not heard from yet. Threads: one, for the polling.
// A peer that comes back (dead in the last view, alive in this one) may have been cut off
// rather than dead, and may have served this node's addresses meanwhile while this node kept
// them (each side saw the other dead): the addresses on interfaces held here are announced
// again, in this round and the next, so that clients' caches that followed the peer come back.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cluster/pool_options.h"
#include "cluster/virtual_server.h"

namespace nasd::cluster {

class AddressPoolServer {
 public:
  // `on_interface`: the address's interface (PoolOptions::on_interface), or nullptr.
  using MakeServer = std::function<std::unique_ptr<VirtualServer>(
      const std::string& name, const std::string& address, uint16_t nfs_port, uint16_t mount_port,
      const address::InterfaceAddress* on_interface)>;
  using AliveFn = std::function<std::map<std::string, bool>()>;  // peers and whether alive

  AddressPoolServer(std::string self, std::vector<PoolOptions> pools, MakeServer make, AliveFn alive,
                    std::chrono::milliseconds interval, std::chrono::milliseconds startup_grace);
  ~AddressPoolServer();  // stop()

  void start();
  void stop();  // releases every address
  // One line per pool address: where it is served ("here", "here(eth1)" when on an interface
  // here, or the node the rule names).
  std::string status() const;

 private:
  void loop();
  void apply(bool in_grace);

  const std::string self_;
  const std::vector<PoolOptions> pools_;
  const MakeServer make_;
  const AliveFn alive_;
  const std::chrono::milliseconds interval_, grace_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::map<std::string, std::string> owner_;                     // address -> node (last applied)
  std::set<std::string> alive_before_;  // the last view's alive nodes (pool thread only)
  int announce_rounds_ = 0;             // rounds left that announce held addresses again
  std::map<std::string, std::unique_ptr<VirtualServer>> servers_;  // addresses claimed here
  std::thread thread_;
};

}  // namespace nasd::cluster
