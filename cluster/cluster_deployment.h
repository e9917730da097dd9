// A node of a cluster with static ownership ([cluster] without shared_dir): the router serves
// the volumes this node owns and forwards the others to their owner over the interconnect; the
// interconnect listener runs peers' forwarded calls on the volumes served here.
// FailoverClusterDeployment (failover_cluster_deployment.h) builds on the same wiring.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/cluster_options.h"
#include "cluster/deployment.h"
#include "cluster/serving_log.h"
#include "cluster/virtual_server.h"

namespace nasd::interconnect {
class ClusterRouter;
class InterconnectServer;
class PeerClient;
class VolumeServer;
}

namespace nasd::cluster {

class ClusterDeployment : public Deployment {
 public:
  ClusterDeployment(const NodePlan& plan, HostedVolumes& hosted);
  ~ClusterDeployment() override;

  std::shared_ptr<fs::VolumeResolver> resolver() override;
  void open_volumes() override;
  void serve_local(std::shared_ptr<fs::Volume> volume) override;
  void start(const rpc::RpcServerOptions& options,
             const std::vector<std::shared_ptr<rpc::Service>>& programs) override;
  void stop() override;
  std::string status() const override;
  std::vector<std::pair<std::string, bool>> peer_links() const override;
  const interconnect::ClusterRouter* router() const override { return router_.get(); }
  void set_interconnect_handler(interconnect::MessageType type,
                                interconnect::RequestHandler handler) override {
    extra_handlers_[type] = std::move(handler);
  }
  std::shared_ptr<interconnect::CallChannel> peer_channel(const std::string& node) const override;
  std::vector<std::string> peer_names() const override;

 protected:
  // The interconnect listener (with `attach` run on it before it starts) and the peer links.
  void start_interconnect(const std::function<void(interconnect::InterconnectServer&)>& attach);
  void stop_interconnect();
  // A node that joined the running cluster may connect to this node's interconnect (and,
  // when allowed_peers is the default, from its interconnect address `host`).
  void admit_peer(const std::string& name, const std::string& host);
  // Whether a connection from `address` may try the interconnect or mirror handshake:
  // `[cluster] allowed_peers`, or the nodes' addresses by default (ClusterOptions), plus the
  // members that joined. Thread-safe; the callable refers to this deployment.
  std::function<bool(const std::string&)> peer_address_gate();
  // One line per peer: its interconnect link up or down.
  std::string peer_lines() const;
  // A link (not started yet) from this node's interconnect address to the member `name` at
  // host:port, authenticated with the cluster key.
  std::shared_ptr<interconnect::PeerClient> make_peer_link(const std::string& name,
                                                           const std::string& host, uint16_t port);

  const NodePlan& plan_;
  HostedVolumes& hosted_;
  std::shared_ptr<interconnect::ClusterRouter> router_;
  std::map<std::string, std::shared_ptr<interconnect::PeerClient>> peers_;
  // `<data_dir>/serving.log` (serving_log.h); null when it could not be opened (logged).
  std::unique_ptr<ServingLog> serving_log_;

 private:
  // Before the listeners that ask it (peer_address_gate), so that it outlives them.
  std::mutex allowed_mu_;
  AddressList allowed_;  // guarded by allowed_mu_; starts as plan_.cluster->allowed_peers
  bool allowed_loaded_ = false;  // guarded by allowed_mu_
  std::unique_ptr<interconnect::VolumeServer> volume_server_;
  std::map<interconnect::MessageType, interconnect::RequestHandler> extra_handlers_;
  std::unique_ptr<interconnect::InterconnectServer> interconnect_;
  std::unique_ptr<VirtualServer> home_server_;
  std::vector<std::unique_ptr<VirtualServer>> evs_servers_;  // N-node static: this node's EVSes
  std::vector<std::string> served_here_;  // this node's planned volumes (static ownership)
};

}  // namespace nasd::cluster
