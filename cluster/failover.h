// Failover for an HA pair: the membership service decides (heartbeats over the interconnect,
// leases from the fencing authority: files on the shared folder, or etcd); this class carries its decisions out
// on the node:
//   serve a volume     open it from the shared folder (for a partner volume: replay this
//                      node's copy of the partner's NVRAM first), route its requests here,
//                      then answer on the virtual server address it belongs to;
//   stop serving it    route its requests to the partner at once, close the address when no
//                      volume of it is served here any more, then close the volume (cleanly
//                      under a lease; abandoned, with nothing written, when the lease ran out).
// It also keeps this node's copy of the partner's NVRAM (PartnerMirror).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cluster/cluster_options.h"
#include "cluster/hosted_volumes.h"
#include "cluster/partner_mirror.h"
#include "cluster/serving_log.h"
#include "cluster/virtual_server.h"
#include "nvram/mirror_server.h"
#include "nvram/region.h"
#include "util/config.h"

namespace nasd::interconnect {
class CallChannel;
class ClusterRouter;
class InterconnectServer;
}  // namespace nasd::interconnect
namespace nasd::membership {
class LeaseAuthority;
class MembershipService;
}  // namespace nasd::membership

namespace nasd::cluster {

struct FailoverWiring {
  std::string self;
  FailoverOptions options;
  PeerOptions partner;
  const Config* config = nullptr;  // the [volume] sections; outlives the Failover
  std::string data_dir;
  nvram::DurabilityMode mirror_mode = nvram::DurabilityMode::Process;
  // The partner mirror's link settings: the cluster key, this node's name, the partner's name.
  nvram::MirrorServerOptions mirror_server;
  HostedVolumes* volumes = nullptr;
  interconnect::ClusterRouter* router = nullptr;
  // Who decides ownership (make_lease_authority: [cluster] authority).
  std::shared_ptr<membership::LeaseAuthority> authority;
  std::shared_ptr<interconnect::CallChannel> partner_channel;
  std::unique_ptr<VirtualServer> home_server;     // this node's address
  std::unique_ptr<VirtualServer> partner_server;  // the partner's, served after a takeover
  // Lock recovery (optional): a volume was opened here (`home`: one of this node's own), or
  // closed here because it goes to the other node.
  std::function<void(uint32_t id, bool home)> volume_opened;
  std::function<void(uint32_t id)> volume_closed;
  // Where each start and stop of serving a volume is recorded for the fault drill; may be null.
  ServingLog* serving_log = nullptr;
};

class Failover {
 public:
  // Throws ConfigError when a volume's id cannot be found or the pair settings do not fit.
  explicit Failover(FailoverWiring wiring);
  ~Failover();  // stop()

  // Registers the heartbeat handler; before the interconnect server starts.
  void attach(interconnect::InterconnectServer& server);
  // Starts the partner mirror and the membership: home volumes are served once their leases
  // are granted (at once on a fresh start, after failback when the partner holds them).
  void start();
  // Hands every volume to the partner (closed cleanly, leases released), closes the addresses.
  void stop();

  // Admin: pair state, every volume with its lease and owner, addresses, NVRAM mirror.
  std::string status() const;
  // The state status() prints, for metrics and the management page.
  struct Report {
    std::string membership;  // the membership's state word(s), as in status()
    bool standby = false;    // after a planned failover
    struct Address {
      std::string node, address;
      bool here = false;
    };
    std::vector<Address> virtual_servers;
    std::vector<uint32_t> serving;  // volumes this node's membership serves
  };
  Report report() const;
  // Planned failover: this node's volumes go to the partner; ends with failback().
  std::string failover();
  // Take the home volumes back from the partner (failback on command).
  std::string failback();

 private:
  // The open hook: retries (backing off) while this node still trusts the volume's lease, so a
  // takeover that meets a failing shared disk or NVRAM copy serves the volume once they work
  // again; until then its requests get NFS3ERR_JUKEBOX. Never opens a taken-over volume
  // without the partner's NVRAM when there is a copy to replay: that would drop acknowledged
  // operations.
  void open_volume(uint32_t id);
  bool try_open(uint32_t id);  // false (logged) when the volume could not be opened
  void close_volume(uint32_t id, bool lease_held);
  void bind_address_of(uint32_t id);
  VirtualServer& server_of(uint32_t id);
  bool is_home(uint32_t id) const { return home_.count(id) > 0; }
  const ConfigSection& section_of(uint32_t id) const;

  // Whether this node's lease on `id` is still trusted right now, without asking the
  // membership: requests and writes check it, so a node that was paused past its lease
  // (a hung process) refuses them before its membership thread runs again.
  bool lease_trusted_now(uint32_t id) const;

  FailoverWiring w_;
  std::map<uint32_t, const ConfigSection*> sections_;
  // Per volume: steady-clock nanoseconds until which its lease is trusted (0: not held).
  std::map<uint32_t, std::shared_ptr<std::atomic<int64_t>>> trusted_until_;
  // Per volume, for its stop line in the serving log (Unix ms, 0: none): the latest trust
  // deadline granted and the last instant the lease check said yes, since it was opened here.
  std::map<uint32_t, std::shared_ptr<ServedBounds>> bounds_;
  std::set<uint32_t> home_, partner_home_;
  std::unique_ptr<PartnerMirror> mirror_;
  std::shared_ptr<membership::LeaseAuthority> leases_;
  std::unique_ptr<membership::MembershipService> membership_;
  std::mutex served_mu_;
  std::set<uint32_t> served_;  // volumes routed here (for the addresses)
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;  // wakes an open_volume() retry at stop()
  bool stopping_ = false;            // guarded by stop_mu_; stop() runs once
};

}  // namespace nasd::cluster
