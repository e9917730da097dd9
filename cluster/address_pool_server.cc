#include "cluster/address_pool_server.h"

#include <set>
#include <sstream>

#include "cluster/membership/address_pool.h"
#include "util/log.h"

namespace nasd::cluster {

AddressPoolServer::AddressPoolServer(std::string self, std::vector<PoolOptions> pools, MakeServer make,
                                     AliveFn alive, std::chrono::milliseconds interval,
                                     std::chrono::milliseconds startup_grace)
    : self_(std::move(self)),
      pools_(std::move(pools)),
      make_(std::move(make)),
      alive_(std::move(alive)),
      interval_(interval),
      grace_(startup_grace) {}

AddressPoolServer::~AddressPoolServer() { stop(); }

void AddressPoolServer::start() {
  apply(true);
  thread_ = std::thread([this] { loop(); });
}

void AddressPoolServer::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [address, server] : servers_) server->release();
  servers_.clear();
}

void AddressPoolServer::loop() {
  const auto started = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, interval_, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    try {
      apply(std::chrono::steady_clock::now() - started < grace_);
    } catch (const std::exception& e) {
      util::log("pool").error(std::string("address pool: ") + e.what());
    }
    lock.lock();
  }
}

void AddressPoolServer::apply(bool in_grace) {
  std::set<std::string> alive = {self_};
  for (const auto& [peer, up] : alive_()) {
    if (up || in_grace) alive.insert(peer);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;
  if (!in_grace) {
    for (const std::string& n : alive)
      if (!alive_before_.empty() && !alive_before_.count(n)) announce_rounds_ = 2;
    alive_before_ = alive;
  }
  if (announce_rounds_ > 0) {
    --announce_rounds_;
    for (auto& [address, server] : servers_) server->announce_again();
  }
  for (const PoolOptions& p : pools_) {
    for (const auto& [address, node] : membership::assign_pool(p.addresses, p.nodes, alive)) {
      auto it = servers_.find(address);
      if (node == self_ && it == servers_.end()) {
        const address::InterfaceAddress* on = nullptr;
        for (size_t i = 0; i < p.on_interface.size(); ++i)
          if (p.addresses[i] == address) on = &p.on_interface[i];
        auto vs = make_(p.name + ":" + address, address, p.nfs_port, p.mount_port, on);
        vs->claim();
        servers_[address] = std::move(vs);
        util::log("pool").info("pool " + p.name + ": serving " + address);
      } else if (node != self_ && it != servers_.end()) {
        it->second->release();
        servers_.erase(it);
        util::log("pool").info("pool " + p.name + ": " + address + " handed to " +
                               (node.empty() ? std::string("nobody") : node));
      }
      owner_[address] = node;
    }
  }
}

std::string AddressPoolServer::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::ostringstream out;
  for (const PoolOptions& p : pools_) {
    out << "pool " << p.name << " (nfs " << p.nfs_port << " mount " << p.mount_port << "):";
    for (const std::string& a : p.addresses) {
      auto it = owner_.find(a);
      const std::string node = it == owner_.end() ? "?" : it->second;
      auto vs = servers_.find(a);
      const bool bound = vs != servers_.end() && vs->second->bound();
      const std::string on = bound ? vs->second->where() : "";
      out << " " << a << "="
          << (node == self_ ? (bound ? (on.empty() ? "here" : "here(" + on.substr(4) + ")") : "here(claiming)")
                            : (node.empty() ? "nobody" : node));
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace nasd::cluster
