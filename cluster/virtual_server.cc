#include "cluster/virtual_server.h"

#include <system_error>
#include <thread>

namespace nasd::cluster {
namespace {

constexpr uint32_t kNfsProgram = 100003;
constexpr uint32_t kMountProgram = 100005;

}  // namespace

VirtualServer::VirtualServer(std::string name, rpc::RpcServerOptions options,
                             std::vector<std::shared_ptr<rpc::Service>> services,
                             bool register_rpcbind)
    : name_(std::move(name)),
      options_(std::move(options)),
      services_(std::move(services)),
      register_rpcbind_(register_rpcbind) {}

VirtualServer::~VirtualServer() { unbind(); }

bool VirtualServer::bind(std::chrono::milliseconds patience) {
  std::lock_guard lock(mu_);
  if (server_) return true;
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    auto server = std::make_unique<rpc::RpcServer>(options_);
    for (const auto& s : services_) server->add_service(s);
    try {
      server->start();
    } catch (const std::system_error& e) {
      last_error_ = e.what();
      if (e.code() == std::errc::address_in_use && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      if (options_.log) options_.log("virtual server " + describe() + ": " + last_error_);
      return false;
    }
    if (register_rpcbind_) {
      // nfs_port == mount_port leaves a single listener that serves both programs.
      const auto& ports = server->bound_ports();
      server->register_with_rpcbind(kNfsProgram, 3, ports.front());
      for (uint32_t v = 1; v <= 3; v++) server->register_with_rpcbind(kMountProgram, v, ports.back());
    }
    server_ = std::move(server);
    last_error_.clear();
    return true;
  }
}

void VirtualServer::unbind() {
  std::unique_ptr<rpc::RpcServer> server;
  {
    std::lock_guard lock(mu_);
    server = std::move(server_);
  }
  if (server) server->stop();
}

bool VirtualServer::bound() const {
  std::lock_guard lock(mu_);
  return server_ != nullptr;
}

std::string VirtualServer::describe() const {
  return name_ + " " + options_.bind_address + " nfs " + std::to_string(options_.ports.front()) +
         " mount " + std::to_string(options_.ports.back());
}

}  // namespace nasd::cluster
