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
    // A slot for every volume: a planned move may designate any of them here. wanted() keeps
    // this node away from those neither designated here nor to a node it covers.
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

std::string ClusterMember::designated(uint32_t volume) const {
  auto it = volumes_.find(volume);
  return it == volumes_.end() ? "" : it->second.home;
}

bool ClusterMember::moving_away(uint32_t volume) const {
  if (!placement_known_ || placement_.handed(volume)) return false;
  const std::string to = placement_.destination(volume);
  return !to.empty() && to != config_.self;
}

bool ClusterMember::moving_here(uint32_t volume) const {
  return placement_known_ && !placement_.handed(volume) &&
         placement_.destination(volume) == config_.self;
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

bool ClusterMember::wanted(uint32_t volume, const Slot& s) const {
  if (config_.placement_from_authority && !placement_known_) return false;
  if (quiescing_ && !s.held) return false;  // stopping: what it holds is kept until the close
  // Handed over for a move and not committed yet: clean, and nobody's until the commit, but
  // for the node it moves to that still serves it (a move to the node serving it).
  if (placement_known_ && placement_.handed(volume))
    return s.held && placement_.destination(volume) == config_.self;
  if (is_home(s)) return !standby_;
  if (!config_.covers.count(s.home)) return false;
  // Its node acknowledged writes our copy of its NVRAM lacks: a takeover from that copy would
  // lose them. Not taken (a volume opened before the mark was seen is kept: its node is the
  // one that set the mark, so it was alive and holding the lease of what it writes).
  if (placement_known_ && placement_.mirror_stale(s.home) && !s.serve_asked) return false;
  // A move designated it to its node only just now: that node gets two leases to take it up
  // (read the commit, win the lease, say so in a heartbeat), as a node that has just started
  // does. Otherwise a node slowed for a moment (a loaded machine, a slow authority, a missed
  // heartbeat or five) loses the volume it is receiving to this node, which keeps it until a
  // failback. Should its node really be dead, the takeover comes two leases after the commit.
  if (!s.held && now_ - s.designated_at < 2 * config_.lease_ms) return false;
  const Peer& home = peers_.at(s.home);
  if (!home.heard && now_ - started_at_ < config_.startup_grace_ms) return false;
  if (!alive(s.home)) return true;
  if (home.wants_failback) return false;
  if (s.held) return true;  // taken over while its node was away; kept until it asks
  // Alive but not holding it (it lost its storage path, or handed it over on purpose):
  // rescue it. The authority refuses if it does hold it. Not from a node that has just
  // started, though: its lease request and replay may outlast the failure timeout (a loaded
  // machine, a slow authority), and the rescue would take the volume from under it while it
  // opens it. It gets two leases' time from its first heartbeat.
  if (now_ - home.started_at < 2 * config_.lease_ms) return false;
  // Nor while the authority does not answer us, or has only just come back: its node most
  // likely lost the lease for the same reason (an authority down for everyone) and gets the
  // same two leases to take it back, or the nodes would swap their volumes at its return.
  if (authority_unreachable_ || now_ - authority_back_at_ < 2 * config_.lease_ms) return false;
  return now_ - s.home_served_at >= home.detector.timeout_ms();
}

bool ClusterMember::wants_failback() const {
  if (standby_) return false;
  if (!config_.auto_failback && !operator_failback_) return false;
  if (authority_seen_at_ < 0 || now_ - authority_seen_at_ > config_.lease_ms) return false;
  for (const auto& [v, s] : volumes_)
    if (is_home(s) && !s.held && !(placement_known_ && (placement_.handed(v) || moving_away(v))))
      return true;
  return false;
}

void ClusterMember::serve(uint32_t volume, Slot& s) {
  s.serve_asked = true;
  emit(MemberAction::Kind::Serve, volume, 0, is_home(s) ? "" : s.home);
}

void ClusterMember::send_handover(uint32_t volume, Slot& s) {
  s.handover = next_request_++;
  actions_.push_back({MemberAction::Kind::HandOver, volume, s.handover, "", s.epoch});
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
  s.handing = false;
  s.handover = 0;
  s.awaiting_read = false;
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
    if (s.held && !s.handing && !s.closing && !s.awaiting_read && now_ >= s.next_handover &&
        (moving_away(v) || moving_here(v))) {
      // A planned move: close cleanly first when it goes elsewhere, then hand it over.
      s.handing = true;
      if (moving_away(v) && s.serve_asked) {
        s.closing = true;
        emit(MemberAction::Kind::Unserve, v);
        s.serve_asked = s.ready = false;
      }
    }
    if (s.handing) {
      // The lease is kept (renewed) until the hand-over is marked at the authority.
      if (s.held && !s.outstanding && now_ >= s.renew_at) send_acquire(v, s);
      const bool still = moving_away(v) || moving_here(v);
      if (s.held && still && !s.closing && !s.handover && now_ >= s.next_handover)
        send_handover(v, s);
      if (s.held && (s.closing || s.handover || still)) continue;
      // Cancelled, or done by an answer that got lost: back to the ordinary rules.
      s.handing = false;
      if (s.held && !s.serve_asked && wanted(v, s)) {
        serve(v, s);
        continue;
      }
    }
    if (s.held && !wanted(v, s) && !s.closing) {
      if (!s.serve_asked) {
        release(v, s);
        continue;
      }
      s.closing = true;  // failback: drain under the lease, then release
      emit(MemberAction::Kind::Unserve, v);
      s.serve_asked = s.ready = false;
    }
    if (!s.held && !wanted(v, s)) continue;
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
        // We stopped serving it and nobody claims it yet: its designated node if not us.
        const std::string& home = volumes_.at(v).home;
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
  bool all_home_held = true, all_home_open = true, covered_dead = false, handing_back = false,
       all_heard = true;
  for (const auto& [v, s] : volumes_) {
    if (is_home(s)) {
      const bool elsewhere = placement_known_ && (placement_.handed(v) || moving_away(v));
      all_home_held &= s.held || elsewhere;
      all_home_open &= (s.held && s.ready) || elsewhere;
      continue;
    }
    if (!config_.covers.count(s.home)) continue;  // moving here, or nobody's business
    if (s.held) ++covered_held;
    if (!alive(s.home)) covered_dead = true;
    if (s.held && alive(s.home) && peers_.at(s.home).wants_failback) handing_back = true;
  }
  for (const auto& n : config_.covers) all_heard &= peers_.at(n).heard;
  if (!settled_)
    settled_ = (all_home_open && (placement_known_ || !config_.placement_from_authority)) ||
               now_ - started_at_ >= 3 * config_.lease_ms;
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
  if (config_.placement_from_authority && now_ >= next_placement_read_) read_placement();
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
    p.started_at = now_;
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
  if (answer.verdict != LeaseVerdict::Unreachable) {
    authority_seen_at_ = now_;
    if (authority_unreachable_) authority_back_at_ = now_;
    authority_unreachable_ = false;
  } else {
    authority_unreachable_ = true;
  }
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
      s.epoch = answer.lease.epoch;
      int64_t until = sent + config_.lease_ms - config_.safety_margin_ms;
      s.trusted_until = s.held ? std::max(s.trusted_until, until) : until;
      s.renew_at = sent + config_.renew_after_ms;
      if (now_ >= s.trusted_until) {
        if (s.held) drop(volume, s);
      } else if (!s.held) {
        if (!wanted(volume, s)) {
          emit(MemberAction::Kind::ReleaseLease, volume);
        } else if (config_.placement_from_authority) {
          // Opened once a read that began after this grant confirms whose it is.
          s.held = true;
          s.awaiting_read = true;
          s.read_after = next_read_;
          read_placement();
        } else {
          s.held = true;
          serve(volume, s);
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
  volume_closed(now_ms, volume, true);
}

void ClusterMember::volume_closed(int64_t now_ms, uint32_t volume, bool clean) {
  advance(now_ms);
  auto it = volumes_.find(volume);
  if (it == volumes_.end()) return;
  Slot& s = it->second;
  if (!s.held || !s.closing) return;
  if (s.handing) {
    s.closing = false;
    if (clean && moving_away(volume)) {
      send_handover(volume, s);
    } else {
      // Not clean (its records are still in our NVRAM), or the move is off: serve it again
      // (our own journal replays what the close could not flush); a move retries later.
      s.handing = false;
      if (!clean) s.next_handover = now_ + config_.retry_ms;
      if (wanted(volume, s))
        serve(volume, s);
      else if (clean)
        release(volume, s);
      else
        serve(volume, s);  // never leave unflushed records behind a released lease
    }
  } else if (wanted(volume, s)) {
    s.closing = false;  // its node went away again while we were closing: keep it
    serve(volume, s);
  } else {
    release(volume, s);
  }
  update_routes();
  update_state();
}

void ClusterMember::placement_changed(int64_t now_ms, const Placement& placement) {
  advance(now_ms);
  // Reads may arrive out of order; a record never goes back to an older version.
  if (placement_known_ && placement.version < placement_.version) return;
  // The first record read describes moves made before this node started, not one under way.
  const bool moves_under_way = placement_known_;
  placement_ = placement;
  placement_known_ = true;
  for (auto& [v, s] : volumes_) {
    std::string to = placement_.designated(v);
    if (to.empty()) to = config_.home.at(v);
    if (to == s.home) continue;
    s.home = to;
    s.home_served_at = now_;
    if (moves_under_way) s.designated_at = now_;  // its new node gets time to pick it up
  }
  update_leases();
  update_routes();
  update_state();
}

void ClusterMember::read_placement() {
  emit(MemberAction::Kind::ReadPlacement, 0, next_read_++);
  next_placement_read_ = now_ + config_.heartbeat_interval_ms;
}

void ClusterMember::placement_read(int64_t now_ms, uint64_t request, bool ok,
                                   const Placement& placement) {
  advance(now_ms);
  if (!ok) return;
  placement_changed(now_ms, placement);
  for (auto& [v, s] : volumes_) {
    if (!s.held || !s.awaiting_read || request < s.read_after) continue;
    s.awaiting_read = false;
    if (!quiescing_ && wanted(v, s))
      serve(v, s);
    else
      release(v, s);
  }
  update_leases();
  update_routes();
  update_state();
}

void ClusterMember::handover_answered(int64_t now_ms, uint32_t volume, uint64_t request,
                                      bool done) {
  advance(now_ms);
  auto it = volumes_.find(volume);
  if (it == volumes_.end()) return;
  Slot& s = it->second;
  if (request == 0 || request != s.handover) return;
  s.handover = 0;
  if (done) {
    s.handing = false;
    // Moving away: closed and marked clean, so the lease goes (the new owner needs it).
    // Moving here: keep serving.
    if (s.held && !s.serve_asked) release(volume, s);
  } else {
    s.next_handover = now_ + config_.retry_ms;
  }
  update_leases();
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

void ClusterMember::quiesce(int64_t now_ms) {
  advance(now_ms);
  quiescing_ = true;
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
