#include "cluster/membership/cluster_membership_service.h"

#include <algorithm>
#include <stdexcept>

#include "util/contained_thread.h"

namespace nasd::membership {

using interconnect::MessageType;

ClusterMembershipService::ClusterMembershipService(
    ClusterMembershipOptions options,
    std::map<std::string, std::shared_ptr<interconnect::CallChannel>> peers,
    std::shared_ptr<LeaseAuthority> authority, ClusterHooks hooks)
    : options_(std::move(options)),
      peers_(std::move(peers)),
      authority_(std::move(authority)),
      hooks_(std::move(hooks)),
      epoch_(std::chrono::steady_clock::now()) {
  std::string problem = validate(options_.member);
  if (problem.empty())
    for (const auto& p : options_.member.peers)
      if (!peers_.count(p)) problem = "no interconnect channel to " + p;
  if (!problem.empty()) throw std::invalid_argument("membership: " + problem);
  const uint64_t incarnation = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
  member_ = std::make_unique<ClusterMember>(options_.member, incarnation, now_ms());
}

ClusterMembershipService::~ClusterMembershipService() { stop(); }

int64_t ClusterMembershipService::now_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               epoch_)
      .count();
}

void ClusterMembershipService::attach(interconnect::InterconnectServer& server) {
  server.set_handler(MessageType::Heartbeat,
                     [this](interconnect::IncomingRequest req) { on_heartbeat(std::move(req)); });
}

void ClusterMembershipService::set_placement_store(std::shared_ptr<PlacementStore> store,
                                                   Placement from_config) {
  std::lock_guard lock(mu_);
  if (!options_.member.placement_from_authority)
    throw std::invalid_argument("membership: a placement store needs placement_from_authority");
  placement_store_ = std::move(store);
  placement_from_config_ = std::move(from_config);
}

std::optional<Placement> ClusterMembershipService::feed_placement_locked(const Placement& p) {
  const uint64_t before = member_->placement_known() ? member_->placement().version : 0;
  const bool first = !member_->placement_known();
  member_->placement_changed(now_ms(), p);
  if (first || member_->placement().version > before) return member_->placement();
  return std::nullopt;
}

void ClusterMembershipService::deliver(const std::optional<Placement>& p) {
  // Outside the lock: binding or releasing an EVS address may wait for running calls.
  if (p && hooks_.placement) hooks_.placement(*p);
}

void ClusterMembershipService::read_placement(uint64_t request) {
  Placement p;
  std::string error;
  const bool ok = read_or_create_placement(*placement_store_, placement_from_config_, &p, &error);
  std::optional<Placement> changed;
  {
    std::lock_guard lock(mu_);
    placement_reads_in_flight_ = std::max(1, placement_reads_in_flight_) - 1;
    if (stopping_) return;
    const uint64_t before = member_->placement_known() ? member_->placement().version : 0;
    const bool first = !member_->placement_known();
    member_->placement_read(now_ms(), request, ok, p);
    if (ok && (first || member_->placement().version > before)) changed = member_->placement();
    dispatch_locked();
  }
  deliver(changed);
}

void ClusterMembershipService::hand_over(uint32_t volume, uint64_t request, uint64_t epoch) {
  const std::string& self = options_.member.self;
  bool done = false;
  Placement seen;
  bool have_seen = false;
  std::string error;
  for (int attempt = 0; attempt < 4 && !done; ++attempt) {
    Placement p;
    if (!read_or_create_placement(*placement_store_, placement_from_config_, &p, &error)) break;
    seen = p;
    have_seen = true;
    if (!mark_handed(p, volume).empty()) break;  // not moving (any more): nothing to mark
    switch (placement_store_->write_holding(p, volume, self, epoch, &error)) {
      case PlacementWrite::Written:
        seen = p;
        done = true;
        break;
      case PlacementWrite::Conflict:
        continue;  // another volume of the move was marked meanwhile, or the lease is gone
      case PlacementWrite::Unreachable:
        attempt = 4;
        break;
    }
  }
  std::optional<Placement> changed;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    if (have_seen) changed = feed_placement_locked(seen);
    member_->handover_answered(now_ms(), volume, request, done);
    dispatch_locked();
  }
  deliver(changed);
}

void ClusterMembershipService::placement_written(const Placement& p) {
  std::optional<Placement> changed;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    changed = feed_placement_locked(p);
    dispatch_locked();
  }
  deliver(changed);
}

Placement ClusterMembershipService::placement() const {
  std::lock_guard lock(mu_);
  return member_->placement_known() ? member_->placement() : Placement{};
}

void ClusterMembershipService::start() {
  std::lock_guard lock(mu_);
  if (started_ || stopping_) return;
  started_ = true;
  ticker_ = util::contained_thread("cluster", "membership ticker", [this] { ticker(); });
}

void ClusterMembershipService::ticker() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    member_->tick(now_ms());
    dispatch_locked();
    if (!settled_told_ && member_->settled()) {
      settled_told_ = true;
      if (hooks_.settled) {
        lock.unlock();
        hooks_.settled();
        lock.lock();
      }
    }
    stop_cv_.wait_for(lock, options_.tick, [&] { return stopping_; });
  }
}

void ClusterMembershipService::dispatch_locked() {
  const std::string& self = options_.member.self;
  for (const MemberAction& a : member_->take_actions()) {
    const uint32_t v = a.volume;
    switch (a.kind) {
      case MemberAction::Kind::SendHeartbeat:
        // At most one in flight per peer: a silent peer must not pile heartbeats up.
        if (heartbeat_in_flight_.insert(a.node).second &&
            !heartbeats_.submit([this, peer = a.node, hb = member_->heartbeat()] {
              send_heartbeat(peer, hb);
            }))
          heartbeat_in_flight_.erase(a.node);
        break;
      case MemberAction::Kind::AcquireLease:
        leases_.submit([this, v, request = a.request, self] {
          LeaseAnswer answer = authority_->acquire(v, self, options_.member.lease_ms);
          std::unique_lock lock(mu_);
          if (stopping_) {
            // A grant that lands during the stop never reaches the member, so stop() would not
            // release it: the lease would outlive this node by a whole term, and the next
            // owner would wait that long. A renewal of a held lease is stop()'s to release.
            const std::vector<uint32_t> held = member_->heartbeat().holding;
            const bool new_grant = answer.verdict == LeaseVerdict::Granted &&
                                   std::find(held.begin(), held.end(), v) == held.end();
            lock.unlock();
            if (new_grant) authority_->release(v, self);
            return;
          }
          member_->lease_answered(now_ms(), v, request, answer);
          if (hooks_.volume.lease_trusted) {
            int64_t until = member_->trusted_until(v);
            hooks_.volume.lease_trusted(v, until ? epoch_ + std::chrono::milliseconds(until)
                                                 : std::chrono::steady_clock::time_point{});
          }
          dispatch_locked();
        });
        break;
      case MemberAction::Kind::ReleaseLease:
        leases_.submit([this, v, self] { authority_->release(v, self); });
        break;
      case MemberAction::Kind::Serve: {
        const uint64_t gen = ++generation_[v];
        volumes_.submit([this, v, gen, from = a.node] {
          if (hooks_.open_from)
            hooks_.open_from(v, from);
          else if (hooks_.volume.open)
            hooks_.volume.open(v);
          opened(v, gen);
        });
        break;
      }
      case MemberAction::Kind::Unserve: {
        ++generation_[v];
        // Inline, not queued behind a slow open: the lease may be running out.
        if (routed_.erase(v) && hooks_.route) {
          const std::string to = member_->route(v);
          if (!to.empty() && to != self) hooks_.route(v, to);
        }
        const bool lease_held = member_->may_serve(v, now_ms());
        volumes_.submit([this, v, lease_held] {
          bool was_open;
          {
            std::lock_guard lock(mu_);
            was_open = opened_.erase(v) > 0;
          }
          bool clean = lease_held;
          if (was_open && hooks_.close_clean)
            clean = hooks_.close_clean(v, lease_held);
          else if (was_open && hooks_.volume.close)
            hooks_.volume.close(v, lease_held);
          std::lock_guard lock(mu_);
          if (stopping_) return;
          member_->volume_closed(now_ms(), v, clean);
          dispatch_locked();
        });
        break;
      }
      case MemberAction::Kind::Route:
        if (!routed_.count(v) && hooks_.route) hooks_.route(v, a.node);
        break;
      case MemberAction::Kind::ReadPlacement:
        // A slow authority must not pile reads up. A read dropped here is made up by the next
        // periodic one: a freshly granted volume waits for any read that began after its grant.
        if (placement_store_ && placement_reads_in_flight_ < 4) {
          ++placement_reads_in_flight_;
          if (!placement_reads_.submit([this, request = a.request] { read_placement(request); }))
            --placement_reads_in_flight_;
        }
        break;
      case MemberAction::Kind::HandOver:
        // On the lease queue: after this node's earlier lease calls, before its release.
        if (placement_store_)
          leases_.submit([this, v, request = a.request, epoch = a.epoch] {
            hand_over(v, request, epoch);
          });
        break;
    }
  }
}

void ClusterMembershipService::opened(uint32_t volume, uint64_t generation) {
  bool routed = false;
  {
    std::lock_guard lock(mu_);
    opened_.insert(volume);
    if (stopping_) return;
    if (generation_[volume] == generation && member_->may_serve(volume, now_ms())) {
      if (routed_.insert(volume).second && hooks_.volume.start_routing) {
        hooks_.volume.start_routing(volume);
        routed = true;
      }
      member_->volume_ready(now_ms(), volume);
    }
    dispatch_locked();
  }
  if (routed && hooks_.volume.serving) hooks_.volume.serving(volume);
}

void ClusterMembershipService::send_heartbeat(const std::string& peer, Heartbeat hb) {
  auto timeout = std::chrono::milliseconds(options_.member.heartbeat_interval_ms * 2);
  interconnect::CallOutcome out =
      peers_.at(peer)->call(MessageType::Heartbeat, encode_heartbeat(hb), timeout);
  Heartbeat theirs;
  std::string error;
  const bool valid =
      out.ok() && decode_heartbeat(out.payload, &theirs, &error) && theirs.node == peer;
  std::lock_guard lock(mu_);
  heartbeat_in_flight_.erase(peer);
  if (!valid || stopping_) return;
  member_->heartbeat_received(now_ms(), theirs);
  dispatch_locked();
}

void ClusterMembershipService::on_heartbeat(interconnect::IncomingRequest request) {
  Heartbeat theirs, ours;
  std::string error;
  // Only a peer's own heartbeat counts: the link proved who sent it, and the heartbeat must
  // not claim to be anyone else.
  const bool valid = decode_heartbeat(request.payload, &theirs, &error) &&
                     theirs.node == request.peer_node && peers_.count(request.peer_node);
  {
    std::lock_guard lock(mu_);
    if (valid && !stopping_) {
      member_->heartbeat_received(now_ms(), theirs);
      dispatch_locked();
    }
    ours = member_->heartbeat();
  }
  request.responder.reply(encode_heartbeat(ours));
}

void ClusterMembershipService::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  heartbeats_.stop();
  placement_reads_.stop();
  volumes_.stop();
  leases_.stop();
  std::vector<uint32_t> held;
  std::map<uint32_t, bool> opened;  // volume -> lease still trusted
  {
    std::lock_guard lock(mu_);
    held = member_->heartbeat().holding;
    for (uint32_t v : opened_) opened[v] = member_->may_serve(v, now_ms());
    opened_.clear();
    for (uint32_t v : routed_) {
      const std::string to = member_->designated(v);
      if (hooks_.route && to != options_.member.self) hooks_.route(v, to);
    }
    routed_.clear();
  }
  for (auto [v, lease_held] : opened) {
    if (hooks_.close_clean)
      hooks_.close_clean(v, lease_held);
    else if (hooks_.volume.close)
      hooks_.volume.close(v, lease_held);
  }
  for (uint32_t v : held) authority_->release(v, options_.member.self);
}

MemberState ClusterMembershipService::state() const {
  std::lock_guard lock(mu_);
  return member_->state();
}

bool ClusterMembershipService::serving(uint32_t volume) const {
  std::lock_guard lock(mu_);
  return routed_.count(volume) > 0 && member_->serving(volume, now_ms());
}

std::string ClusterMembershipService::status() const {
  std::lock_guard lock(mu_);
  Heartbeat hb = member_->heartbeat();
  std::string out = std::string("state=") + member_state_name(member_->state()) +
                    " view=" + std::to_string(member_->view()) + " holding=";
  for (size_t i = 0; i < hb.holding.size(); ++i) out += (i ? "," : "") + std::to_string(hb.holding[i]);
  return out;
}

std::map<std::string, bool> ClusterMembershipService::peers_alive() const {
  std::lock_guard lock(mu_);
  std::map<std::string, bool> out;
  for (const auto& p : options_.member.peers) out[p] = member_->peer_alive(p);
  return out;
}

std::string ClusterMembershipService::route(uint32_t volume) const {
  std::lock_guard lock(mu_);
  return member_->route(volume);
}

void ClusterMembershipService::request_failback(bool wanted) {
  std::lock_guard lock(mu_);
  member_->request_failback(now_ms(), wanted);
  dispatch_locked();
}

void ClusterMembershipService::quiesce() {
  std::lock_guard lock(mu_);
  member_->quiesce(now_ms());
}

void ClusterMembershipService::request_failover() {
  std::lock_guard lock(mu_);
  member_->request_failover(now_ms());
  dispatch_locked();
}

bool ClusterMembershipService::standby() const {
  std::lock_guard lock(mu_);
  return member_->standby();
}

}  // namespace nasd::membership
