// Runs a ClusterMember for real (any failover cluster, the HA pair included): a ticker thread
// feeds it the steady clock; heartbeats go to every peer over the interconnect (each peer answers
// with its own, so one exchange informs both sides), at most one in flight per peer; lease
// requests run FIFO against the LeaseAuthority on their own thread (a hung SAN must not stall
// heartbeats); Serve/Unserve become calls to the node's hooks on a third thread, and Route hints
// go straight to the router.
//
// Wiring (ClusterFailover): a channel to every peer (PeerClient), the lease authority, and
// hooks: open = open the volume and replay its journal, then ClusterRouter::add_local;
// start_routing = router.set_owner(volume, self); route = router.set_owner(volume, node);
// close = drain and close the volume. attach() it to the node's InterconnectServer before that
// server starts.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "cluster/interconnect/call_channel.h"
#include "cluster/interconnect/interconnect_server.h"
#include "cluster/membership/cluster_member.h"
#include "cluster/membership/lease_authority.h"
#include "cluster/membership/placement_store.h"
#include "util/task_queue.h"

namespace nasd::membership {

// What the node does when the member decides. `start_routing` is called with the service's lock
// held and must be quick and must not call back into the service (typically
// ClusterRouter::set_owner). Requests already running when routing stops finish under the
// lease's safety margin.
struct MembershipHooks {
  std::function<void(uint32_t volume)> open;           // replay the journal, open (slow)
  std::function<void(uint32_t volume)> start_routing;  // route its requests here
  std::function<void(uint32_t volume)> serving;        // after start_routing, without the lock
  // Drain, checkpoint, close (slow). `lease_held` false: the lease ran out (self-fence), another
  // node may already own the volume, so nothing more may be written to it.
  std::function<void(uint32_t volume, bool lease_held)> close;
  // After every lease answer: until when the lease is trusted (epoch when not held). Quick,
  // called with the lock held. Lets the node refuse requests and writes past that instant
  // even if this service is not scheduled in time (a paused process).
  std::function<void(uint32_t volume, std::chrono::steady_clock::time_point until)> lease_trusted;
};

// The volume hooks, plus `route` (quick, under the service's lock): requests for a volume not
// served here go to `node`; an Unserve routes to the member's current route.
struct ClusterHooks {
  MembershipHooks volume;
  std::function<void(uint32_t volume, const std::string& node)> route;
  // When set, used instead of volume.open / volume.close: the open names the node whose NVRAM
  // copy to replay first ("" for none), and the close says whether it was clean (every
  // acknowledged operation flushed), which a planned move needs before it hands a volume over.
  std::function<void(uint32_t volume, const std::string& replay_from)> open_from;
  std::function<bool(uint32_t volume, bool lease_held)> close_clean;
  // The placement record changed (planned moves); called without the service's lock, possibly
  // from several threads (records may arrive out of order: keep the newest version).
  std::function<void(const Placement&)> placement;
  // Once, without the lock, when the member settled after its start (ClusterMember::settled).
  std::function<void()> settled;
};

struct ClusterMembershipOptions {
  ClusterMemberConfig member;
  std::chrono::milliseconds tick{50};
};

class ClusterMembershipService {
 public:
  // `peers`: a channel to every peer of options.member. Throws std::invalid_argument when
  // validate() finds a problem.
  ClusterMembershipService(ClusterMembershipOptions options,
                           std::map<std::string, std::shared_ptr<interconnect::CallChannel>> peers,
                           std::shared_ptr<LeaseAuthority> authority, ClusterHooks hooks);
  ~ClusterMembershipService();  // stop()

  void attach(interconnect::InterconnectServer& server);
  // Planned moves (before start()): designated nodes come from `store`, polled every heartbeat
  // interval; `from_config` is the placement the cluster config describes (stored when the
  // authority has none). Requires options.member.placement_from_authority.
  void set_placement_store(std::shared_ptr<PlacementStore> store, Placement from_config);
  void start();
  // The node begins to stop: no volume is taken from now on (ClusterMember::quiesce); what is
  // served goes on until stop().
  void quiesce();
  // Stops serving everything and releases the leases so the covering nodes take over at once.
  void stop();

  MemberState state() const;
  bool serving(uint32_t volume) const;
  std::string status() const;
  // Peers and whether each is believed alive.
  std::map<std::string, bool> peers_alive() const;
  std::string route(uint32_t volume) const;
  void request_failback(bool wanted);
  void request_failover();
  bool standby() const;
  // The placement this node knows (empty with version 0 before the first read).
  Placement placement() const;
  // Feeds a record just written by this node (an admin move), so it acts without a poll.
  void placement_written(const Placement& p);

 private:
  int64_t now_ms() const;
  void ticker();
  void dispatch_locked();
  void send_heartbeat(const std::string& peer, Heartbeat hb);
  void on_heartbeat(interconnect::IncomingRequest request);
  void opened(uint32_t volume, uint64_t generation);
  void read_placement(uint64_t request);
  void hand_over(uint32_t volume, uint64_t request, uint64_t epoch);
  // The record the node's hooks must see, if it changed; delivered with deliver() after the
  // lock is dropped.
  std::optional<Placement> feed_placement_locked(const Placement& p);
  void deliver(const std::optional<Placement>& p);

  const ClusterMembershipOptions options_;
  const std::map<std::string, std::shared_ptr<interconnect::CallChannel>> peers_;
  const std::shared_ptr<LeaseAuthority> authority_;
  const ClusterHooks hooks_;
  const std::chrono::steady_clock::time_point epoch_;

  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  bool started_ = false, stopping_ = false;
  bool settled_told_ = false;  // the settled hook was called
  std::unique_ptr<ClusterMember> member_;
  std::map<uint32_t, uint64_t> generation_;
  std::set<uint32_t> opened_, routed_;
  std::set<std::string> heartbeat_in_flight_;  // guarded by mu_
  std::shared_ptr<PlacementStore> placement_store_;
  Placement placement_from_config_;
  int placement_reads_in_flight_ = 0;  // guarded by mu_
  std::thread ticker_;
  // Heartbeats: one thread per peer would be 7 threads; a small pool with one heartbeat in
  // flight per peer keeps a silent peer from delaying the others.
  util::TaskQueue heartbeats_{util::TaskQueue::Options{
      .threads = 4, .max_queued = 0, .at_stop = util::TaskQueue::AtStop::DropQueued, .room = "cluster"}};
  static inline const util::TaskQueue::Options kSerial{
      .threads = 1, .max_queued = 0, .at_stop = util::TaskQueue::AtStop::DropQueued, .room = "cluster"};
  util::TaskQueue leases_{kSerial};
  util::TaskQueue volumes_{kSerial};
  util::TaskQueue placement_reads_{kSerial};
};

}  // namespace nasd::membership
