// Failover for a cluster of 2 to 8 nodes ([member]s, or the HA pair: a ring of two): the
// ClusterMembershipService decides (heartbeats to every peer, leases at the configured
// authority); this class carries its decisions out on the node:
//   serve a volume     open it from the shared folder (a covered node's volume: replay this
//                      node's copy of that node's NVRAM first), route its requests here, then
//                      answer on the address of its EVS;
//   stop serving it    route it away at once, close the EVS address when none of its volumes
//                      is served here any more, then close the volume (cleanly under a lease;
//                      abandoned, with nothing written, when the lease ran out).
// It keeps one PartnerMirror per covered node: the ring's predecessor, or every primary for a
// standby (the k-th covered node on mirror_listen's port + k).
// The node's own address ([node] listen) is not an EVS: it never moves, and serves every volume
// of the cluster (forwarding) for as long as the node runs. In the pair form it is the node's EVS
// (EvsOptions::is_node_address) and moves with the node's volumes.
//
// Planned moves (`nasd-admin evs move EVS NODE`, `volume move VOLUME EVS`): the designated node
// of every EVS and the EVS of every volume are kept at the lease authority
// (membership/placement.h); a move is proposed there, the node serving each volume closes it
// cleanly and hands it over under its lease, and the new node opens it with nothing to replay.
// Any node may therefore serve any EVS: every EVS's virtual server exists on every node, bound
// while a volume of that EVS is served here.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/cluster_options.h"
#include "cluster/serving_log.h"
#include "cluster/hosted_volumes.h"
#include "cluster/membership/placement.h"
#include "cluster/partner_mirror.h"
#include "cluster/stale_mirror_gate.h"
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
class ClusterMembershipService;
class PlacementStore;
}  // namespace nasd::membership

namespace nasd::cluster {

// What the node's lock manager (NLM) is told as volumes come and go (cluster/node_locks.cc).
struct VolumeLockHooks {
  // Opened here, before its requests are routed here: adopt its lock table, or begin its grace.
  std::function<void(uint32_t id)> opened;
  // The address of its EVS (`address`: what clients mounted) answers here now.
  std::function<void(uint32_t id, const std::string& address)> serving;
  // Routed away and its address released, before the close. `handover`: closed under its lease
  // (the lock table goes with it); otherwise the lease ran out and the locks are lost.
  std::function<void(uint32_t id, bool handover)> closing;
};

struct ClusterFailoverWiring {
  std::string self;
  const ClusterOptions* cluster = nullptr;  // members, EVSes, timings; outlives this
  const Config* config = nullptr;           // the [volume] sections; outlives this
  std::string data_dir;
  nvram::DurabilityMode mirror_mode = nvram::DurabilityMode::Process;
  nvram::MirrorServerOptions mirror_server;  // credentials and address filter (primary: set here)
  HostedVolumes* volumes = nullptr;
  interconnect::ClusterRouter* router = nullptr;
  std::shared_ptr<membership::LeaseAuthority> authority;
  std::map<std::string, std::shared_ptr<interconnect::CallChannel>> peers;
  // Builds an EVS's virtual server with the node's programs (the pair form's own address among
  // them).
  std::function<std::unique_ptr<VirtualServer>(const EvsOptions&)> make_evs;
  VolumeLockHooks locks;
  // Where this node records when it starts and stops serving a volume (for the fault drill);
  // may be null. Outlives this.
  ServingLog* serving_log = nullptr;
};

class ClusterFailover {
 public:
  // Throws ConfigError when the cluster settings do not fit.
  explicit ClusterFailover(ClusterFailoverWiring wiring);
  ~ClusterFailover();  // stop()

  void attach(interconnect::InterconnectServer& server);
  void start();
  // The node begins to stop: it takes no volume over from now on (see stop()).
  void quiesce();
  void stop();

  // `nasd-admin cluster`: every node with its state, EVSes, volumes, mirror partner and lease.
  std::string status() const;
  // The state status() prints, for metrics and the management page.
  struct Report {
    std::string membership;  // the membership's state word(s), as in status()
    bool standby = false;    // after a planned failover
    struct Address {
      std::string node, address;  // the EVS's home node and "NAME LISTEN"
      bool here = false;
    };
    std::vector<Address> virtual_servers;
    std::vector<uint32_t> serving;  // volumes this node's membership serves
  };
  Report report() const;
  // Peers and whether membership believes each alive (the address pools follow it).
  std::map<std::string, bool> peers_alive() const;
  // Planned failover: this node's volumes go to the node covering it; ends with failback().
  std::string failover();
  // Take the home volumes back from the node covering this one (failback on command).
  std::string failback();
  // `nasd-admin evs ...` and `volume move|cancel-move ...`: a planned move, proposed at the
  // authority, then waited for (at most `wait`) until the new node serves every volume of it.
  std::string evs_command(const std::vector<std::string>& args);
  std::string volume_move_command(const std::vector<std::string>& args);
  // `nasd-admin cluster accept-mirror-loss NODE --yes-lose-unmirrored-writes`: clears NODE's
  // stale-mirror mark, so its covering node takes its volumes over from the copy it has,
  // losing the stable writes NODE acknowledged that the copy lacks.
  std::string mirror_command(const std::vector<std::string>& args);

 private:
  // The open hook: retries (backing off) while this node still trusts the volume's lease, so a
  // takeover that meets a failing shared disk or NVRAM copy serves the volume once they work
  // again; until then its requests get NFS3ERR_JUKEBOX. Never opens a taken-over volume
  // without the covered node's NVRAM when there is a copy to replay (`replay_from`, the node
  // the volume is designated to; "" when it is designated here): that would drop acknowledged
  // operations.
  void open_volume(uint32_t id, const std::string& replay_from);
  bool try_open(uint32_t id, const std::string& replay_from);  // false (logged): not opened
  // True when the close was clean and flushed (a planned move hands the volume over only then).
  bool close_volume(uint32_t id, bool lease_held);
  void bind_address_of(uint32_t id);
  // Binds the address of every EVS with a volume served here, releases the others.
  void rebind_locked();
  void placement_changed(const membership::Placement& p);
  std::string propose(const std::function<std::string(membership::Placement&)>& change,
                      std::vector<uint32_t> volumes, const std::string& what, int64_t wait_ms);
  std::optional<uint32_t> volume_id(const std::string& name_or_id) const;
  // Whether this node's lease on `id` is still trusted right now, without asking the
  // membership: requests and writes check it, so a node that was paused past its lease
  // (a hung process) refuses them before its membership thread runs again.
  bool lease_trusted_now(uint32_t id) const;
  const ConfigSection& section_of(uint32_t id) const { return *sections_.at(id); }

  ClusterFailoverWiring w_;
  std::map<uint32_t, const ConfigSection*> sections_;
  std::map<uint32_t, std::string> home_;  // volume -> home node
  std::map<uint32_t, std::string> evs_;   // volume -> its EVS (the placement's), served_mu_
  membership::Placement from_config_;     // the placement the config describes
  std::shared_ptr<membership::PlacementStore> placement_store_;
  // Marks this node's mirror stale at the authority before an unmirrored acknowledgement
  // (null: no mirror, or mirror_policy = fail, which never acknowledges one).
  std::shared_ptr<StaleMirrorGate> stale_gate_;
  std::map<uint32_t, std::shared_ptr<std::atomic<int64_t>>> trusted_until_;
  std::map<uint32_t, std::shared_ptr<ServedBounds>> bounds_;  // for the serving log's stop lines
  std::map<std::string, std::unique_ptr<PartnerMirror>> mirrors_;       // covered node -> copy
  std::map<std::string, std::unique_ptr<VirtualServer>> evs_servers_;   // EVSes it may serve
  std::shared_ptr<membership::LeaseAuthority> leases_;
  std::unique_ptr<membership::ClusterMembershipService> membership_;
  std::mutex served_mu_;
  std::set<uint32_t> served_;
  std::set<std::string> claimed_evs_;  // EVS addresses claimed here, guarded by served_mu_
  uint64_t placement_applied_ = 0;     // version of the record evs_ follows, served_mu_
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
};

}  // namespace nasd::cluster
