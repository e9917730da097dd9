#include "cluster/membership/cluster_member.h"

#include <algorithm>
#include <utility>

namespace nasd::membership {

std::string validate(const ClusterMemberConfig& c) {
  if (c.self.empty()) return "a member needs a name";
  if (c.peers.empty() || c.peers.size() > 7) return "a cluster has 2 to 8 nodes";
  std::set<std::string> names(c.peers.begin(), c.peers.end());
  if (names.size() != c.peers.size() || names.count(c.self)) return "node names must differ";
  for (const auto& n : c.covers)
    if (!names.count(n)) return "covers " + n + ", which is not a peer";
  for (const auto& [v, home] : c.home)
    if (home != c.self && !names.count(home))
      return "volume " + std::to_string(v) + " is homed on an unknown node " + home;
  if (c.heartbeat_interval_ms <= 0 || c.missed_heartbeats < 1)
    return "heartbeat interval and missed heartbeat count must be positive";
  if (c.safety_margin_ms <= 0 || c.retry_ms <= 0) return "safety margin and retry must be positive";
  if (c.renew_after_ms <= 0 || c.renew_after_ms + c.retry_ms >= c.lease_ms - c.safety_margin_ms)
    return "lease too short: renewals (and one retry) must fit before lease_ms - safety_margin_ms";
  return "";
}

const char* member_state_name(MemberState s) {
  switch (s) {
    case MemberState::Starting: return "starting";
    case MemberState::Normal: return "normal";
    case MemberState::Covering: return "covering";
    case MemberState::HandingBack: return "handing-back";
  }
  return "unknown";
}

ClusterMember::ClusterMember(ClusterMemberConfig config, uint64_t incarnation, int64_t now_ms)
    : config_(std::move(config)),
      incarnation_(incarnation),
      started_at_(now_ms),
      now_(now_ms),
      next_heartbeat_(now_ms) {
  for (const auto& p : config_.peers) peers_.emplace(p, Peer(config_, now_ms));
  for (const auto& [v, home] : config_.home) {
    routes_[v] = home != config_.self ? home : "";  // own volumes: nowhere until served
    if (home != config_.self && !config_.covers.count(home)) continue;
    Slot& s = volumes_[v];
    s.home = home;
    s.home_served_at = now_ms;
  }
}

void ClusterMember::emit(MemberAction::Kind kind, uint32_t volume, uint64_t request,
                         std::string node) {
  actions_.push_back({kind, volume, request, std::move(node)});
}

std::vector<MemberAction> ClusterMember::take_actions() { return std::exchange(actions_, {}); }

void ClusterMember::advance(int64_t now_ms) { now_ = std::max(now_, now_ms); }

bool ClusterMember::alive(const std::string& node) const {
  auto it = peers_.find(node);
  return it != peers_.end() && !it->second.detector.suspects(now_);
}

bool ClusterMember::peer_alive(const std::string& node) const { return alive(node); }

bool ClusterMember::may_serve(uint32_t volume, int64_t now_ms) const {
  auto it = volumes_.find(volume);
  return it != volumes_.end() && it->second.held && now_ms < it->second.trusted_until;
}

int64_t ClusterMember::trusted_until(uint32_t volume) const {
  auto it = volumes_.find(volume);
  return it != volumes_.end() && it->second.held ? it->second.trusted_until : 0;
}

bool ClusterMember::serving(uint32_t volume, int64_t now_ms) const {
  auto it = volumes_.find(volume);
  return may_serve(volume, now_ms) && it->second.ready && !it->second.closing;
}

std::string ClusterMember::route(uint32_t volume) const {
  auto it = routes_.find(volume);
  return it == routes_.end() ? "" : it->second;
}

std::vector<uint32_t> ClusterMember::candidates() const {
  std::vector<uint32_t> out;
  for (const auto& [v, s] : volumes_) out.push_back(v);
  return out;
}

Heartbeat ClusterMember::heartbeat() const {
  Heartbeat hb{config_.self, incarnation_, view_, {}, wants_failback()};
  for (const auto& [v, s] : volumes_)
    if (s.held) hb.holding.push_back(v);
  return hb;
}

bool ClusterMember::wanted(const Slot& s) const {
  if (is_home(s)) return !standby_;
  const Peer& home = peers_.at(s.home);
  if (!home.heard && now_ - started_at_ < config_.startup_grace_ms) return false;
  if (!alive(s.home)) return true;
  if (home.wants_failback) return false;
  if (s.held) return true;  // taken over while its node was away; kept until it asks
  // Alive but not holding it (it lost its storage path, or handed it over on purpose):
  // rescue it. The authority refuses if it does hold it.
  return now_ - s.home_served_at >= home.detector.timeout_ms();
}

bool ClusterMember::wants_failback() const {
  if (standby_) return false;
  if (!config_.auto_failback && !operator_failback_) return false;
  if (authority_seen_at_ < 0 || now_ - authority_seen_at_ > config_.lease_ms) return false;
  for (const auto& [v, s] : volumes_)
    if (is_home(s) && !s.held) return true;
  return false;
}

void ClusterMember::send_acquire(uint32_t volume, Slot& s) {
  s.outstanding = next_request_++;
  s.outstanding_sent = now_;
  emit(MemberAction::Kind::AcquireLease, volume, s.outstanding);
}

void ClusterMember::drop(uint32_t volume, Slot& s) {
  s.held = false;
  s.closing = false;
  if (s.serve_asked) emit(MemberAction::Kind::Unserve, volume);
  s.serve_asked = s.ready = false;
}

void ClusterMember::release(uint32_t volume, Slot& s) {
  drop(volume, s);
  // An acquire in flight is carried out before this release (FIFO); its answer is now stale.
  s.outstanding = 0;
  emit(MemberAction::Kind::ReleaseLease, volume);
}

void ClusterMember::update_leases() {
  for (auto& [v, s] : volumes_) {
    if (s.outstanding && now_ - s.outstanding_sent >= config_.lease_ms) s.outstanding = 0;
    if (s.held && now_ >= s.trusted_until) drop(v, s);  // could not renew in time: self-fence
    if (s.held && !wanted(s) && !s.closing) {
      if (!s.serve_asked) {
        release(v, s);
        continue;
      }
      s.closing = true;  // failback: drain under the lease, then release
      emit(MemberAction::Kind::Unserve, v);
      s.serve_asked = s.ready = false;
    }
    if (!s.held && !wanted(s)) continue;
    if (s.outstanding) continue;
    if (s.held ? now_ >= s.renew_at : now_ >= s.next_attempt) send_acquire(v, s);
  }
}

void ClusterMember::update_routes() {
  for (auto& [v, current] : routes_) {
    std::string to;
    auto slot = volumes_.find(v);
    if (slot != volumes_.end() && slot->second.held && slot->second.ready &&
        !slot->second.closing) {
      to = config_.self;
    } else {
      for (const auto& [name, p] : peers_)
        if (p.holding.count(v) && alive(name)) {
          to = name;
          break;
        }
      if (to.empty() && current == config_.self) {
        // We stopped serving it and nobody claims it yet: its home node if that is not us.
        const std::string& home = config_.home.at(v);
        if (home != config_.self) to = home;
      }
    }
    if (to.empty() || to == current) continue;
    current = to;
    if (to != config_.self) emit(MemberAction::Kind::Route, v, 0, to);
  }
}

void ClusterMember::update_state() {
  int covered_held = 0;
  bool all_home_held = true, covered_dead = false, handing_back = false, all_heard = true;
  for (const auto& [v, s] : volumes_) {
    if (is_home(s)) {
      all_home_held &= s.held;
      continue;
    }
    if (s.held) ++covered_held;
    if (!alive(s.home)) covered_dead = true;
    if (s.held && alive(s.home) && peers_.at(s.home).wants_failback) handing_back = true;
  }
  for (const auto& n : config_.covers) all_heard &= peers_.at(n).heard;
  if (operator_failback_ && all_home_held) operator_failback_ = false;
  MemberState next = handing_back                  ? MemberState::HandingBack
                     : covered_dead || covered_held ? MemberState::Covering
                     : !all_heard                    ? MemberState::Starting
                                                     : MemberState::Normal;
  if (!all_heard && !covered_held && now_ - started_at_ < config_.startup_grace_ms)
    next = MemberState::Starting;
  if (next != state_) {
    state_ = next;
    ++view_;
  }
}

void ClusterMember::tick(int64_t now_ms) {
  advance(now_ms);
  if (now_ >= next_heartbeat_) {
    for (const auto& p : config_.peers) emit(MemberAction::Kind::SendHeartbeat, 0, 0, p);
    next_heartbeat_ = now_ + config_.heartbeat_interval_ms;
  }
  update_leases();
  update_routes();
  update_state();
}

void ClusterMember::heartbeat_received(int64_t now_ms, const Heartbeat& hb) {
  advance(now_ms);
  auto it = peers_.find(hb.node);
  if (it == peers_.end()) return;
  Peer& p = it->second;
  p.detector.heard(now_);
  p.heard = true;
  if (hb.incarnation != p.incarnation) {
    // A fresh start: give it the usual time to pick its volumes up before rescuing them.
    p.incarnation = hb.incarnation;
    for (auto& [v, s] : volumes_)
      if (s.home == hb.node) s.home_served_at = now_;
  }
  p.wants_failback = hb.wants_failback;
  p.holding = std::set<uint32_t>(hb.holding.begin(), hb.holding.end());
  for (uint32_t v : hb.holding) {
    auto slot = volumes_.find(v);
    if (slot != volumes_.end() && slot->second.home == hb.node) slot->second.home_served_at = now_;
  }
  update_leases();
  update_routes();
  update_state();
}

void ClusterMember::lease_answered(int64_t now_ms, uint32_t volume, uint64_t request,
                                   const LeaseAnswer& answer) {
  advance(now_ms);
  auto it = volumes_.find(volume);
  if (it == volumes_.end()) return;
  Slot& s = it->second;
  if (answer.verdict != LeaseVerdict::Unreachable) authority_seen_at_ = now_;
  if (request == 0 || request != s.outstanding) {
    // Stale. A grant we do not believe in is handed back, if nothing of ours is in flight.
    if (answer.verdict == LeaseVerdict::Granted && !s.held && s.outstanding == 0)
      emit(MemberAction::Kind::ReleaseLease, volume);
    return;
  }
  const int64_t sent = s.outstanding_sent;
  s.outstanding = 0;
  switch (answer.verdict) {
    case LeaseVerdict::Granted: {
      int64_t until = sent + config_.lease_ms - config_.safety_margin_ms;
      s.trusted_until = s.held ? std::max(s.trusted_until, until) : until;
      s.renew_at = sent + config_.renew_after_ms;
      if (now_ >= s.trusted_until) {
        if (s.held) drop(volume, s);
      } else if (!s.held) {
        if (!wanted(s)) {
          emit(MemberAction::Kind::ReleaseLease, volume);
        } else {
          s.held = true;
          s.serve_asked = true;
          emit(MemberAction::Kind::Serve, volume);
        }
      }
      break;
    }
    case LeaseVerdict::HeldByOther:
      if (s.held) drop(volume, s);
      s.next_attempt = now_ + config_.retry_ms;
      break;
    case LeaseVerdict::Unreachable:
      s.next_attempt = now_ + config_.retry_ms;
      s.renew_at = std::min(s.renew_at, now_ + config_.retry_ms);
      break;
  }
  update_leases();
  update_routes();
  update_state();
}

void ClusterMember::volume_ready(int64_t now_ms, uint32_t volume) {
  advance(now_ms);
  auto it = volumes_.find(volume);
  if (it == volumes_.end()) return;
  Slot& s = it->second;
  if (s.held && s.serve_asked && !s.ready) {
    s.ready = true;
    ++view_;
  }
  update_routes();
  update_state();
}

void ClusterMember::volume_closed(int64_t now_ms, uint32_t volume) {
  advance(now_ms);
  auto it = volumes_.find(volume);
  if (it == volumes_.end()) return;
  Slot& s = it->second;
  if (!s.held || !s.closing) return;
  if (wanted(s)) {
    s.closing = false;  // its node went away again while we were closing: keep it
    s.serve_asked = true;
    emit(MemberAction::Kind::Serve, volume);
  } else {
    release(volume, s);
  }
  update_routes();
  update_state();
}

void ClusterMember::request_failback(int64_t now_ms, bool wanted) {
  advance(now_ms);
  operator_failback_ = wanted;
  if (wanted) standby_ = false;
  update_leases();
  update_routes();
  update_state();
}

void ClusterMember::request_failover(int64_t now_ms) {
  advance(now_ms);
  standby_ = true;
  operator_failback_ = false;
  update_leases();
  update_routes();
  update_state();
}

}  // namespace nasd::membership
