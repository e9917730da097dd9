#include "cluster/membership/membership_service.h"
#include "util/contained_thread.h"

#include <stdexcept>

namespace nasd::membership {

using interconnect::MessageType;

MembershipService::MembershipService(MembershipOptions options,
                                     std::shared_ptr<interconnect::CallChannel> partner,
                                     std::shared_ptr<LeaseAuthority> authority,
                                     MembershipHooks hooks)
    : options_(std::move(options)),
      partner_(std::move(partner)),
      authority_(std::move(authority)),
      hooks_(std::move(hooks)),
      epoch_(std::chrono::steady_clock::now()) {
  std::string problem = validate(options_.pair);
  if (!problem.empty()) throw std::invalid_argument("membership: " + problem);
  // Wall-clock milliseconds differ at every start, which is all an incarnation needs.
  uint64_t incarnation = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
  member_ = std::make_unique<PairMember>(options_.pair, incarnation, now_ms());
}

MembershipService::~MembershipService() { stop(); }

int64_t MembershipService::now_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               epoch_)
      .count();
}

void MembershipService::attach(interconnect::InterconnectServer& server) {
  server.set_handler(MessageType::Heartbeat,
                     [this](interconnect::IncomingRequest req) { on_heartbeat(std::move(req)); });
}

void MembershipService::start() {
  std::lock_guard lock(mu_);
  if (started_ || stopping_) return;
  started_ = true;
  ticker_ = util::contained_thread("cluster", "membership ticker", [this] { ticker(); });
}

void MembershipService::ticker() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    member_->tick(now_ms());
    dispatch_locked();
    stop_cv_.wait_for(lock, options_.tick, [&] { return stopping_; });
  }
}

void MembershipService::dispatch_locked() {
  const std::string& self = options_.pair.self;
  for (const PairAction& a : member_->take_actions()) {
    const uint32_t v = a.volume;
    switch (a.kind) {
      case PairAction::Kind::SendHeartbeat:
        // At most one in flight: a slow partner must not pile heartbeats up.
        if (!heartbeat_in_flight_.exchange(true)) {
          heartbeats_.submit([this, hb = member_->heartbeat()] { send_heartbeat(hb); });
        }
        break;
      case PairAction::Kind::AcquireLease:
        leases_.submit([this, v, request = a.request, self] {
          LeaseAnswer answer = authority_->acquire(v, self, options_.pair.lease_ms);
          std::lock_guard lock(mu_);
          if (stopping_) return;
          member_->lease_answered(now_ms(), v, request, answer);
          if (hooks_.lease_trusted) {
            int64_t until = member_->trusted_until(v);
            hooks_.lease_trusted(v, until ? epoch_ + std::chrono::milliseconds(until)
                                          : std::chrono::steady_clock::time_point{});
          }
          dispatch_locked();
        });
        break;
      case PairAction::Kind::ReleaseLease:
        leases_.submit([this, v, self] { authority_->release(v, self); });
        break;
      case PairAction::Kind::Serve: {
        uint64_t gen = ++generation_[v];
        volumes_.submit([this, v, gen] {
          if (hooks_.open) hooks_.open(v);
          opened(v, gen);
        });
        break;
      }
      case PairAction::Kind::Unserve: {
        ++generation_[v];
        // Inline, not queued behind a slow open: the lease may be running out.
        if (routed_.erase(v) && hooks_.stop_routing) hooks_.stop_routing(v);
        // A failback drains under the lease it still holds; a lost lease allows no writes.
        const bool lease_held = member_->may_serve(v, now_ms());
        volumes_.submit([this, v, lease_held] {
          bool was_open;
          {
            std::lock_guard lock(mu_);
            was_open = opened_.erase(v) > 0;
          }
          if (was_open && hooks_.close) hooks_.close(v, lease_held);
          std::lock_guard lock(mu_);
          if (stopping_) return;
          member_->volume_closed(now_ms(), v);
          dispatch_locked();
        });
        break;
      }
    }
  }
}

void MembershipService::opened(uint32_t volume, uint64_t generation) {
  bool routed = false;
  {
    std::lock_guard lock(mu_);
    opened_.insert(volume);
    if (stopping_) return;
    // Route here only if nothing changed while the volume was opening (no Unserve since).
    if (generation_[volume] == generation && member_->may_serve(volume, now_ms())) {
      if (routed_.insert(volume).second && hooks_.start_routing) {
        hooks_.start_routing(volume);
        routed = true;
      }
      member_->volume_ready(now_ms(), volume);
    }
    dispatch_locked();
  }
  // Still on the volumes thread, so an Unserve's close runs only after this.
  if (routed && hooks_.serving) hooks_.serving(volume);
}

void MembershipService::send_heartbeat(Heartbeat hb) {
  auto timeout = std::chrono::milliseconds(options_.pair.heartbeat_interval_ms * 2);
  interconnect::CallOutcome out =
      partner_->call(MessageType::Heartbeat, encode_heartbeat(hb), timeout);
  heartbeat_in_flight_ = false;
  Heartbeat theirs;
  std::string error;
  if (!out.ok() || !decode_heartbeat(out.payload, &theirs, &error)) return;
  std::lock_guard lock(mu_);
  if (stopping_) return;
  member_->heartbeat_received(now_ms(), theirs);
  dispatch_locked();
}

void MembershipService::on_heartbeat(interconnect::IncomingRequest request) {
  Heartbeat theirs, ours;
  std::string error;
  bool valid = decode_heartbeat(request.payload, &theirs, &error);
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

void MembershipService::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  heartbeats_.stop();
  volumes_.stop();
  leases_.stop();
  // Hand everything over now rather than making the partner wait for our leases to expire.
  std::vector<uint32_t> held;
  std::set<uint32_t> routed;
  std::map<uint32_t, bool> opened;  // volume -> lease still trusted
  {
    std::lock_guard lock(mu_);
    held = member_->heartbeat().holding;
    routed.swap(routed_);
    for (uint32_t v : opened_) opened[v] = member_->may_serve(v, now_ms());
    opened_.clear();
    for (uint32_t v : routed) {
      if (hooks_.stop_routing) hooks_.stop_routing(v);
    }
  }
  for (auto [v, lease_held] : opened) {
    if (hooks_.close) hooks_.close(v, lease_held);
  }
  for (uint32_t v : held) authority_->release(v, options_.pair.self);
}

PairState MembershipService::state() const {
  std::lock_guard lock(mu_);
  return member_->state();
}

bool MembershipService::serving(uint32_t volume) const {
  std::lock_guard lock(mu_);
  return routed_.count(volume) > 0 && member_->serving(volume, now_ms());
}

std::string MembershipService::status() const {
  std::lock_guard lock(mu_);
  Heartbeat hb = member_->heartbeat();
  std::string out = std::string("state=") + pair_state_name(member_->state()) +
                    " view=" + std::to_string(member_->view()) + " holding=";
  for (size_t i = 0; i < hb.holding.size(); ++i) {
    out += (i ? "," : "") + std::to_string(hb.holding[i]);
  }
  return out;
}

void MembershipService::request_failback(bool wanted) {
  std::lock_guard lock(mu_);
  member_->request_failback(now_ms(), wanted);
  dispatch_locked();
}

void MembershipService::request_failover() {
  std::lock_guard lock(mu_);
  member_->request_failover(now_ms());
  dispatch_locked();
}

bool MembershipService::standby() const {
  std::lock_guard lock(mu_);
  return member_->standby();
}

}  // namespace nasd::membership
