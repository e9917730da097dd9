#include "cluster/virtual_server.h"

#include <system_error>

#include "util/log.h"
#include "util/contained_thread.h"

namespace nasd::cluster {
namespace {

constexpr uint32_t kNfsProgram = 100003;
constexpr uint32_t kMountProgram = 100005;

}  // namespace

VirtualServer::VirtualServer(std::string name, rpc::RpcServerOptions options,
                             std::vector<std::shared_ptr<rpc::Service>> services,
                             bool register_rpcbind,
                             std::unique_ptr<address::HostedAddress> on_interface)
    : name_(std::move(name)),
      options_(std::move(options)),
      services_(std::move(services)),
      register_rpcbind_(register_rpcbind),
      on_interface_(std::move(on_interface)) {}

VirtualServer::~VirtualServer() { release(); }

bool VirtualServer::try_bind_locked(bool log_failure) {
  if (server_) return true;
  if (on_interface_ && !on_interface_->held()) {
    std::string error;
    if (!on_interface_->acquire(&error)) {
      if (log_failure) util::log("cluster").warn("virtual server " + describe() + ": " + error);
      return false;
    }
    util::log("cluster").info("virtual server " + describe() + ": " + on_interface_->address().describe() +
                              " added and announced" + (error.empty() ? "" : " (" + error + ")"));
  }
  std::unique_ptr<rpc::RpcServer> server;
  // Everything inside the try: this runs on claim and membership threads, which must not die.
  try {
    server = std::make_unique<rpc::RpcServer>(options_);
    for (const auto& s : services_) server->add_service(s);
    server->start();
    if (register_rpcbind_) {
      // nfs_port == mount_port leaves a single listener that serves both programs.
      const auto& ports = server->bound_ports();
      server->register_with_rpcbind(kNfsProgram, 3, ports.front());
      for (uint32_t v = 1; v <= 3; v++) server->register_with_rpcbind(kMountProgram, v, ports.back());
      // Any other program (NLM, NSM) beside MOUNT, every version it serves.
      for (const auto& s : services_) {
        if (s->program() == kNfsProgram || s->program() == kMountProgram) continue;
        for (uint32_t v = s->low_version(); v <= s->high_version(); v++)
          server->register_with_rpcbind(s->program(), v, ports.back());
      }
    }
  } catch (const std::exception& e) {
    if (log_failure) util::log("cluster").warn("virtual server " + describe() + ": " + e.what());
    return false;
  }
  server_ = std::move(server);
  util::log("cluster").info("virtual server " + describe() + ": served here");
  return true;
}

bool VirtualServer::bind() {
  std::lock_guard lock(mu_);
  return try_bind_locked(true);
}

void VirtualServer::claim(std::chrono::milliseconds retry) {
  std::lock_guard lock(mu_);
  if (claimed_) return;
  claimed_ = true;
  if (try_bind_locked(false)) return;
  util::log("cluster").warn("virtual server " + describe() + ": still held elsewhere, retrying");
  if (claimer_.joinable()) claimer_.join();  // a finished earlier claim
  claimer_ = util::contained_thread("cluster", "virtual server claim", [this, retry] { claimer(retry); });
}

void VirtualServer::claimer(std::chrono::milliseconds retry) {
  std::unique_lock lock(mu_);
  for (int attempt = 1; claimed_ && !server_; ++attempt) {
    cv_.wait_for(lock, retry, [&] { return !claimed_; });
    // Why it still fails, now and then, so that a stuck claim is visible in the log.
    if (claimed_) try_bind_locked(attempt % 50 == 1);
  }
}

void VirtualServer::release() {
  std::unique_ptr<rpc::RpcServer> server;
  std::thread claimer;
  {
    std::lock_guard lock(mu_);
    claimed_ = false;
    server = std::move(server_);
    claimer = std::move(claimer_);
    // The address leaves the interface before anything else: clients stop reaching this host
    // at once and the next owner's probe finds it free. (A claimer cannot be inside acquire()
    // now: it runs under mu_, and sees claimed_ false when it wakes.)
    if (on_interface_ && on_interface_->held()) {
      std::string error;
      if (on_interface_->release(&error))
        util::log("cluster").info("virtual server " + describe() + ": " +
                                  on_interface_->address().describe() + " removed");
      else
        util::log("cluster").error("virtual server " + describe() + ": " + error);
    }
  }
  cv_.notify_all();
  if (claimer.joinable()) claimer.join();
  if (server) {
    server->stop();
    util::log("cluster").info("virtual server " + describe() + ": no longer served here");
  }
}

bool VirtualServer::bound() const {
  std::lock_guard lock(mu_);
  return server_ != nullptr;
}

void VirtualServer::announce_again() {
  std::lock_guard lock(mu_);
  if (!on_interface_ || !on_interface_->held()) return;
  std::string error;
  if (!on_interface_->announce_again(&error))
    util::log("cluster").warn("virtual server " + describe() + ": announcing again: " + error);
}

std::string VirtualServer::where() const {
  std::lock_guard lock(mu_);
  return on_interface_ && on_interface_->held() ? " on " + on_interface_->address().interface : "";
}

std::string VirtualServer::describe() const {
  return name_ + " " + options_.bind_address + " nfs " + std::to_string(options_.ports.front()) +
         " mount " + std::to_string(options_.ports.back());
}

}  // namespace nasd::cluster
