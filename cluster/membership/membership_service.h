// Runs a PairMember for real: a ticker thread feeds it the steady clock, heartbeats go to the
// partner over the interconnect (the partner answers with its own, so one exchange informs
// both sides), lease requests run FIFO against the LeaseAuthority on their own thread, and
// Serve/Unserve become calls to the node's hooks on a third thread.
//
// Wiring (the lead's side): create the service with the channel to the partner (a PeerClient),
// the FileLeaseAuthority on the shared folder, and hooks: open = open the volume and replay its
// journal, then ClusterRouter::add_local; start_routing = router.set_owner(volume, self);
// stop_routing = router.set_owner(volume, partner); close = drain and close the volume.
// attach() it to the node's InterconnectServer before that server starts.
#pragma once

#include <chrono>
#include <condition_variable>
#include <atomic>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "cluster/interconnect/call_channel.h"
#include "cluster/interconnect/interconnect_server.h"
#include "cluster/membership/lease_authority.h"
#include "cluster/membership/pair_member.h"
#include "util/task_queue.h"

namespace nasd::membership {

// What the node does when the pair decides. `start_routing`/`stop_routing` are called with the
// service's lock held and must be quick and must not call back into the service (typically
// ClusterRouter::set_owner). Requests already running when routing stops finish under the
// lease's safety margin.
struct MembershipHooks {
  std::function<void(uint32_t volume)> open;           // replay the journal, open (slow)
  std::function<void(uint32_t volume)> start_routing;  // route its requests here
  std::function<void(uint32_t volume)> serving;        // after start_routing, without the lock
  std::function<void(uint32_t volume)> stop_routing;   // route them away, at once
  // Drain, checkpoint, close (slow). `lease_held` false: the lease ran out (self-fence), the
  // partner may already own the volume, so nothing more may be written to it.
  std::function<void(uint32_t volume, bool lease_held)> close;
  // After every lease answer: until when the lease is trusted (epoch when not held). Quick,
  // called with the lock held. Lets the node refuse requests and writes past that instant
  // even if this service is not scheduled in time (a paused process).
  std::function<void(uint32_t volume, std::chrono::steady_clock::time_point until)> lease_trusted;
};

struct MembershipOptions {
  PairConfig pair;
  std::chrono::milliseconds tick{50};
};

class MembershipService {
 public:
  // Throws std::invalid_argument when validate(options.pair) finds a problem.
  MembershipService(MembershipOptions options, std::shared_ptr<interconnect::CallChannel> partner,
                    std::shared_ptr<LeaseAuthority> authority, MembershipHooks hooks);
  ~MembershipService();  // stop()

  // Registers the Heartbeat handler (before server.start()).
  void attach(interconnect::InterconnectServer& server);
  void start();
  // Stops serving everything (hooks.unserve) and releases our leases so the partner can take
  // over at once instead of waiting for them to expire. Idempotent.
  void stop();

  PairState state() const;
  bool serving(uint32_t volume) const;
  // One line for admin status: state, view and what is held.
  std::string status() const;
  void request_failback(bool wanted);
  // Planned failover: drain the home volumes and hand them to the partner.
  void request_failover();
  bool standby() const;

 private:
  int64_t now_ms() const;
  void ticker();
  // Carries out whatever the member asked for; call after every event (with mu_ held).
  void dispatch_locked();
  void send_heartbeat(Heartbeat hb);
  void on_heartbeat(interconnect::IncomingRequest request);
  void opened(uint32_t volume, uint64_t generation);

  const MembershipOptions options_;
  const std::shared_ptr<interconnect::CallChannel> partner_;
  const std::shared_ptr<LeaseAuthority> authority_;
  const MembershipHooks hooks_;
  const std::chrono::steady_clock::time_point epoch_;

  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  bool started_ = false, stopping_ = false;
  std::unique_ptr<PairMember> member_;
  std::map<uint32_t, uint64_t> generation_;  // bumped by every Serve/Unserve of a volume
  std::set<uint32_t> opened_, routed_;
  std::atomic<bool> heartbeat_in_flight_{false};
  std::thread ticker_;
  // One thread each, in submission order (the state machine requires lease requests carried out
  // FIFO, and a hung SAN must not stall heartbeats); stop() drops what has not started.
  static inline const util::TaskQueue::Options kSerial{
      .threads = 1, .max_queued = 0, .at_stop = util::TaskQueue::AtStop::DropQueued, .room = "cluster"};
  util::TaskQueue heartbeats_{kSerial};
  util::TaskQueue leases_{kSerial};
  util::TaskQueue volumes_{kSerial};
};

}  // namespace nasd::membership
