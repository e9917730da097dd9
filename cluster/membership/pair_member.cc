#include "cluster/membership/pair_member.h"

#include <algorithm>
#include <set>
#include <utility>

namespace nasd::membership {

std::string validate(const PairConfig& c) {
  if (c.self.empty() || c.partner.empty() || c.self == c.partner) {
    return "pair needs two different node names";
  }
  if (c.heartbeat_interval_ms <= 0 || c.missed_heartbeats < 1) {
    return "heartbeat interval and missed heartbeat count must be positive";
  }
  if (c.safety_margin_ms <= 0 || c.retry_ms <= 0) return "safety margin and retry must be positive";
  if (c.renew_after_ms <= 0 || c.renew_after_ms + c.retry_ms >= c.lease_ms - c.safety_margin_ms) {
    return "lease too short: renewals (and one retry) must fit before lease_ms - safety_margin_ms";
  }
  std::set<uint32_t> home(c.home.begin(), c.home.end());
  for (uint32_t v : c.partner_home) {
    if (home.count(v)) return "volume " + std::to_string(v) + " is homed on both nodes";
  }
  return "";
}

const char* pair_state_name(PairState s) {
  switch (s) {
    case PairState::Starting: return "starting";
    case PairState::BothUp: return "both-up";
    case PairState::PartnerSuspected: return "partner-suspected";
    case PairState::PartnerFenced: return "partner-fenced";
    case PairState::TakenOver: return "taken-over";
    case PairState::FailbackRequested: return "failback-requested";
  }
  return "unknown";
}

PairMember::PairMember(PairConfig config, uint64_t incarnation, int64_t now_ms)
    : config_(std::move(config)),
      incarnation_(incarnation),
      started_at_(now_ms),
      now_(now_ms),
      detector_(config_.heartbeat_interval_ms, config_.missed_heartbeats, now_ms),
      next_heartbeat_(now_ms) {
  for (uint32_t v : config_.home) volumes_[v].home = true;
  for (uint32_t v : config_.partner_home) volumes_[v].partner_served_at = now_ms;
}

void PairMember::emit(PairAction::Kind kind, uint32_t volume, uint64_t request) {
  actions_.push_back({kind, volume, request});
}

std::vector<PairAction> PairMember::take_actions() { return std::exchange(actions_, {}); }

void PairMember::advance(int64_t now_ms) { now_ = std::max(now_, now_ms); }

bool PairMember::may_serve(uint32_t volume, int64_t now_ms) const {
  auto it = volumes_.find(volume);
  return it != volumes_.end() && it->second.held && now_ms < it->second.trusted_until;
}

int64_t PairMember::trusted_until(uint32_t volume) const {
  auto it = volumes_.find(volume);
  return it != volumes_.end() && it->second.held ? it->second.trusted_until : 0;
}

bool PairMember::serving(uint32_t volume, int64_t now_ms) const {
  auto it = volumes_.find(volume);
  return may_serve(volume, now_ms) && it->second.ready && !it->second.closing;
}

Heartbeat PairMember::heartbeat() const {
  Heartbeat hb{config_.self, incarnation_, view_, {}, wants_failback()};
  for (const auto& [v, s] : volumes_) {
    if (s.held) hb.holding.push_back(v);
  }
  return hb;
}

bool PairMember::wanted(const Slot& s) const {
  if (s.home) return !standby_;
  if (!heard_partner_ && now_ - started_at_ < config_.startup_grace_ms) return false;
  if (!partner_alive()) return true;
  if (partner_wants_failback_) return false;
  if (s.held) return true;  // taken over while the partner was away; kept until it asks
  // Alive but not holding it (e.g. it lost its storage path): rescue it. The authority still
  // refuses if the partner does hold it, so a wrong guess costs one lease request.
  return now_ - s.partner_served_at >= detector_.timeout_ms();
}

bool PairMember::wants_failback() const {
  if (standby_) return false;
  if (!config_.auto_failback && !operator_failback_) return false;
  // Asking while we cannot reach the authority would only make the partner let go of volumes
  // that we could not take.
  if (authority_seen_at_ < 0 || now_ - authority_seen_at_ > config_.lease_ms) return false;
  for (const auto& [v, s] : volumes_) {
    if (s.home && !s.held) return true;
  }
  return false;
}

void PairMember::send_acquire(uint32_t volume, Slot& s) {
  s.outstanding = next_request_++;
  s.outstanding_sent = now_;
  emit(PairAction::Kind::AcquireLease, volume, s.outstanding);
}

void PairMember::drop(uint32_t volume, Slot& s) {
  s.held = false;
  s.closing = false;
  if (s.serve_asked) emit(PairAction::Kind::Unserve, volume);
  s.serve_asked = s.ready = false;
}

void PairMember::release(uint32_t volume, Slot& s) {
  drop(volume, s);
  // An acquire still in flight is carried out before this release (FIFO), and its answer is
  // now stale, so the authority ends up free and we never believe otherwise.
  s.outstanding = 0;
  emit(PairAction::Kind::ReleaseLease, volume);
}

void PairMember::update_leases() {
  for (auto& [v, s] : volumes_) {
    if (s.outstanding && now_ - s.outstanding_sent >= config_.lease_ms) s.outstanding = 0;
    if (s.held && now_ >= s.trusted_until) drop(v, s);  // could not renew in time: self-fence
    if (s.held && !wanted(s) && !s.closing) {
      if (!s.serve_asked) {
        release(v, s);  // never opened: nothing to drain
        continue;
      }
      // Failback: stop taking requests, let the driver drain it, keep renewing meanwhile.
      s.closing = true;
      emit(PairAction::Kind::Unserve, v);
      s.serve_asked = s.ready = false;
    }
    if (!s.held && !wanted(s)) continue;
    if (s.outstanding) continue;
    if (s.held ? now_ >= s.renew_at : now_ >= s.next_attempt) send_acquire(v, s);
  }
}

void PairMember::update_state() {
  int partner_total = 0, held = 0, ready = 0;
  bool all_home_held = true;
  for (const auto& [v, s] : volumes_) {
    if (s.home) all_home_held &= s.held;
    if (s.home) continue;
    ++partner_total;
    held += s.held ? 1 : 0;
    ready += s.held && s.ready ? 1 : 0;
  }
  // An operator's failback is one command: once it got the home volumes back it is done, and
  // a later loss of them (a lost lease) waits for the next command.
  if (operator_failback_ && all_home_held) operator_failback_ = false;
  PairState next;
  if (!partner_alive()) {
    next = held == 0 ? PairState::PartnerSuspected
                     : (ready < partner_total ? PairState::PartnerFenced : PairState::TakenOver);
  } else if (!heard_partner_) {
    next = PairState::Starting;
  } else if (held == 0) {
    next = PairState::BothUp;
  } else if (partner_wants_failback_) {
    next = PairState::FailbackRequested;
  } else {
    next = PairState::TakenOver;
  }
  if (next != state_) {
    state_ = next;
    ++view_;
  }
}

void PairMember::tick(int64_t now_ms) {
  advance(now_ms);
  if (now_ >= next_heartbeat_) {
    emit(PairAction::Kind::SendHeartbeat, 0);
    next_heartbeat_ = now_ + config_.heartbeat_interval_ms;
  }
  update_leases();
  update_state();
}

void PairMember::heartbeat_received(int64_t now_ms, const Heartbeat& hb) {
  advance(now_ms);
  if (hb.node != config_.partner) return;
  detector_.heard(now_);
  heard_partner_ = true;
  if (hb.incarnation != partner_incarnation_) {
    // A fresh start: give it the usual time to pick up its volumes before rescuing them.
    partner_incarnation_ = hb.incarnation;
    for (auto& [v, s] : volumes_) {
      if (!s.home) s.partner_served_at = now_;
    }
  }
  partner_wants_failback_ = hb.wants_failback;
  for (uint32_t v : hb.holding) {
    auto it = volumes_.find(v);
    if (it != volumes_.end() && !it->second.home) it->second.partner_served_at = now_;
  }
  update_leases();
  update_state();
}

void PairMember::lease_answered(int64_t now_ms, uint32_t volume, uint64_t request,
                                const LeaseAnswer& answer) {
  advance(now_ms);
  auto it = volumes_.find(volume);
  if (it == volumes_.end()) return;
  Slot& s = it->second;
  if (answer.verdict != LeaseVerdict::Unreachable) authority_seen_at_ = now_;
  if (request == 0 || request != s.outstanding) {
    // Stale (we gave up on it or released since). If it granted a lease we do not believe
    // in, hand it back so the partner need not wait for it to expire; safe only while nothing
    // else of ours is in flight for the volume.
    if (answer.verdict == LeaseVerdict::Granted && !s.held && s.outstanding == 0) {
      emit(PairAction::Kind::ReleaseLease, volume);
    }
    return;
  }
  const int64_t sent = s.outstanding_sent;
  s.outstanding = 0;
  switch (answer.verdict) {
    case LeaseVerdict::Granted: {
      // The authority's expiry is at least sent + lease_ms, whenever it handled the request.
      int64_t until = sent + config_.lease_ms - config_.safety_margin_ms;
      s.trusted_until = s.held ? std::max(s.trusted_until, until) : until;
      s.renew_at = sent + config_.renew_after_ms;
      if (now_ >= s.trusted_until) {
        if (s.held) drop(volume, s);  // answered too late to be of use; retried below
      } else if (!s.held) {
        if (!wanted(s)) {
          // Failback asked for meanwhile: nothing of ours is in flight, give it straight back.
          emit(PairAction::Kind::ReleaseLease, volume);
        } else {
          s.held = true;
          s.serve_asked = true;
          emit(PairAction::Kind::Serve, volume);
        }
      }
      break;
    }
    case LeaseVerdict::HeldByOther:
      if (s.held) drop(volume, s);  // the authority says it is no longer ours: stop now
      s.next_attempt = now_ + config_.retry_ms;
      break;
    case LeaseVerdict::Unreachable:
      s.next_attempt = now_ + config_.retry_ms;
      s.renew_at = std::min(s.renew_at, now_ + config_.retry_ms);
      break;
  }
  update_leases();
  update_state();
}

void PairMember::volume_ready(int64_t now_ms, uint32_t volume) {
  advance(now_ms);
  auto it = volumes_.find(volume);
  if (it == volumes_.end()) return;
  Slot& s = it->second;
  if (s.held && s.serve_asked && !s.ready) {
    s.ready = true;
    ++view_;
  }
  update_state();
}

void PairMember::volume_closed(int64_t now_ms, uint32_t volume) {
  advance(now_ms);
  auto it = volumes_.find(volume);
  if (it == volumes_.end()) return;
  Slot& s = it->second;
  if (!s.held || !s.closing) return;
  if (wanted(s)) {
    // The partner went away again while we were closing: keep the volume.
    s.closing = false;
    s.serve_asked = true;
    emit(PairAction::Kind::Serve, volume);
  } else {
    release(volume, s);
  }
  update_state();
}

void PairMember::request_failback(int64_t now_ms, bool wanted) {
  advance(now_ms);
  operator_failback_ = wanted;
  if (wanted) standby_ = false;
  update_leases();
  update_state();
}

void PairMember::request_failover(int64_t now_ms) {
  advance(now_ms);
  standby_ = true;
  operator_failback_ = false;
  update_leases();
  update_state();
}

}  // namespace nasd::membership
