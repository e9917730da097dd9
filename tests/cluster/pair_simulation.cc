#include "tests/cluster/pair_simulation.h"

#include <algorithm>

namespace nasd::cluster::testing {

using membership::LeaseAnswer;
using membership::LeaseVerdict;
using membership::PairAction;
using membership::PairMember;

PairSimulation::PairSimulation(uint64_t seed, SimFaults faults, membership::PairConfig a,
                               membership::PairConfig b, bool trace)
    : rng_(seed), faults_(faults), tracing_(trace) {
  nodes_[0].config = std::move(a);
  nodes_[1].config = std::move(b);
  for (int i = 0; i < 2; ++i) {
    nodes_[i].member = std::make_unique<PairMember>(nodes_[i].config, 1, now_);
  }
}

void PairSimulation::log(const std::string& line) {
  if (!tracing_) return;
  trace_.push_back("t=" + std::to_string(now_) + " " + line);
  if (trace_.size() > 200) trace_.pop_front();
}

std::string PairSimulation::trace() const {
  std::string out;
  for (const auto& l : trace_) out += l + "\n";
  return out;
}

void PairSimulation::schedule(int64_t at, std::function<void()> fn) {
  events_.push(Event{at, next_seq_++, std::move(fn)});
}

void PairSimulation::carry_out(int i) {
  Node& n = nodes_[i];
  if (!n.up) return;
  const std::string& name = n.config.self;
  const uint64_t inc = n.incarnation;
  const int other = 1 - i;
  for (const PairAction& a : n.member->take_actions()) {
    switch (a.kind) {
      case PairAction::Kind::SendHeartbeat: {
        if (!link_ok_[i]) break;
        membership::Heartbeat hb = n.member->heartbeat();
        schedule(now_ + 1 + rand_ms(faults_.max_net_delay_ms), [this, other, hb] {
          if (!nodes_[other].up) return;
          nodes_[other].member->heartbeat_received(now_, hb);
          carry_out(other);
        });
        break;
      }
      case PairAction::Kind::AcquireLease:
      case PairAction::Kind::ReleaseLease: {
        if (faults_.etcd) {
          etcd_request(i, inc, a);
          break;
        }
        bool acquire = a.kind == PairAction::Kind::AcquireLease;
        log(name + (acquire ? " acquire " : " release ") + std::to_string(a.volume));
        int64_t at = std::max(n.authority_free_at, now_ + rand_ms(faults_.max_authority_delay_ms));
        n.authority_free_at = at;
        schedule(at, [this, i, inc, a, acquire, name] {
          if (!alive(i, inc)) return;  // a dead process issues no more storage requests
          LeaseAnswer answer;
          membership::Lease& lease = authority_[a.volume];
          if (!nodes_[i].san_ok) {
            answer.verdict = LeaseVerdict::Unreachable;
          } else if (!acquire) {
            membership::apply_release(lease, name);
            return;
          } else if (!faults_.fencing) {
            lease = {name, lease.epoch + 1, now_ + nodes_[i].config.lease_ms};
            answer.verdict = LeaseVerdict::Granted;
          } else {
            bool ok = membership::apply_acquire(lease, name, now_, nodes_[i].config.lease_ms);
            answer.verdict = ok ? LeaseVerdict::Granted : LeaseVerdict::HeldByOther;
          }
          if (!acquire) return;
          answer.lease = lease;
          schedule(now_ + rand_ms(faults_.max_authority_delay_ms), [this, i, inc, a, answer] {
            if (!alive(i, inc)) return;
            nodes_[i].member->lease_answered(now_, a.volume, a.request, answer);
            carry_out(i);
          });
        });
        break;
      }
      case PairAction::Kind::Serve: {
        bool partner_volume = std::find(n.config.home.begin(), n.config.home.end(), a.volume) ==
                              n.config.home.end();
        stats_.takeovers += partner_volume ? 1 : 0;
        log(name + " serve " + std::to_string(a.volume));
        schedule(now_ + rand_ms(faults_.max_open_ms), [this, i, inc, a] {
          if (!alive(i, inc)) return;
          nodes_[i].member->volume_ready(now_, a.volume);
          carry_out(i);
        });
        break;
      }
      case PairAction::Kind::Unserve:
        log(name + " unserve " + std::to_string(a.volume));
        schedule(now_ + rand_ms(faults_.max_open_ms), [this, i, inc, a] {
          if (!alive(i, inc)) return;
          bool was_closing = nodes_[i].member->may_serve(a.volume, now_);
          nodes_[i].member->volume_closed(now_, a.volume);
          if (was_closing && !nodes_[i].member->may_serve(a.volume, now_)) ++stats_.failbacks;
          carry_out(i);
        });
        break;
    }
  }
  if (violation_.empty()) violation_ = check_safety();
}

void PairSimulation::etcd_answer(int i, uint64_t inc, const PairAction& a, LeaseAnswer answer) {
  if (answer.verdict == LeaseVerdict::Granted) {
    // A new holder's epoch is above every earlier one; a holder keeps its epoch.
    membership::Lease& last = last_grant_[a.volume];
    const bool same = last.holder == answer.lease.holder;
    if (same ? answer.lease.epoch < last.epoch : answer.lease.epoch <= last.epoch) {
      if (violation_.empty())
        violation_ = "epoch " + std::to_string(answer.lease.epoch) + " granted to " +
                     answer.lease.holder + " for volume " + std::to_string(a.volume) +
                     " is not above " + last.holder + "'s " + std::to_string(last.epoch);
    }
    last = answer.lease;
  }
  schedule(now_ + rand_ms(faults_.max_authority_delay_ms), [this, i, inc, a, answer] {
    if (!alive(i, inc)) return;
    nodes_[i].member->lease_answered(now_, a.volume, a.request, answer);
    carry_out(i);
  });
}

void PairSimulation::etcd_request(int i, uint64_t inc, const PairAction& a) {
  Node& n = nodes_[i];
  const std::string name = n.config.self;
  const std::string key = "volume-" + std::to_string(a.volume);
  const bool acquire = a.kind == PairAction::Kind::AcquireLease;
  log(name + (acquire ? " etcd acquire " : " etcd release ") + std::to_string(a.volume));
  // Two requests to etcd, each delayed; the node's lease calls stay FIFO.
  const int64_t read_at = std::max(n.authority_free_at, now_ + rand_ms(faults_.max_authority_delay_ms));
  const int64_t write_at = read_at + rand_ms(faults_.max_authority_delay_ms);
  n.authority_free_at = write_at;
  const int64_t ttl_s = (n.config.lease_ms + 999) / 1000;
  schedule(read_at, [=, this] {
    if (!alive(i, inc)) return;
    const bool reachable = nodes_[i].san_ok && etcd_up_;
    if (!reachable) {
      if (acquire) etcd_answer(i, inc, a, LeaseAnswer{LeaseVerdict::Unreachable, {}, "etcd down"});
      return;
    }
    const std::optional<EtcdStoreModel::Key> seen = etcd_.get(key);
    schedule(write_at, [=, this] {
      if (!alive(i, inc)) return;  // a dead process sends nothing more
      if (!nodes_[i].san_ok || !etcd_up_) {
        if (acquire) etcd_answer(i, inc, a, LeaseAnswer{LeaseVerdict::Unreachable, {}, "etcd down"});
        return;
      }
      if (!acquire) {
        if (seen && seen->value == name) {
          etcd_.delete_if_unchanged(key, seen->mod_revision);
          etcd_.revoke(seen->lease);
        }
        return;
      }
      LeaseAnswer answer;
      if (!seen) {
        const int64_t lease = etcd_.grant(now_, ttl_s);
        int64_t created = 0;
        if (faults_.etcd_cas) {
          created = etcd_.create_if_absent(key, name, lease);
        } else {
          created = etcd_.put(key, name, lease);  // BROKEN: no compare
        }
        if (created) {
          answer = {LeaseVerdict::Granted, {name, static_cast<uint64_t>(created), 0}, ""};
        } else {
          etcd_.revoke(lease);
          ++stats_.etcd_lost_races;
          auto now_held = etcd_.get(key);
          answer = {LeaseVerdict::HeldByOther, {now_held ? now_held->value : "", 0, 0}, ""};
        }
      } else if (seen->value == name) {
        answer = etcd_.keepalive(now_, seen->lease) > 0
                     ? LeaseAnswer{LeaseVerdict::Granted,
                                   {name, static_cast<uint64_t>(seen->create_revision), 0}, ""}
                     : LeaseAnswer{LeaseVerdict::Unreachable, {}, "lapsed"};
      } else {
        answer = {LeaseVerdict::HeldByOther, {seen->value, 0, 0}, ""};
      }
      etcd_answer(i, inc, a, answer);
    });
  });
}

std::string PairSimulation::check_safety() const {
  std::map<uint32_t, int> trusted_by;
  for (int i = 0; i < 2; ++i) {
    const Node& n = nodes_[i];
    if (!n.up) continue;
    for (const auto* list : {&n.config.home, &n.config.partner_home}) {
      for (uint32_t v : *list) {
        if (!n.member->may_serve(v, now_)) continue;
        if (++trusted_by[v] > 1) {
          return "SPLIT BRAIN: volume " + std::to_string(v) + " trusted by both nodes at t=" +
                 std::to_string(now_);
        }
        if (!faults_.fencing) continue;
        if (faults_.etcd) {
          if (!etcd_.held_by("volume-" + std::to_string(v), n.config.self, now_))
            return n.config.self + " trusts a lease on volume " + std::to_string(v) +
                   " that etcd does not give it at t=" + std::to_string(now_);
          continue;
        }
        auto it = authority_.find(v);
        if (it == authority_.end() || it->second.holder != n.config.self ||
            it->second.expires_ms <= now_) {
          return n.config.self + " trusts a lease on volume " + std::to_string(v) +
                 " that the authority does not give it at t=" + std::to_string(now_);
        }
      }
    }
  }
  return "";
}

void PairSimulation::crash(int i) {
  log(nodes_[i].config.self + " CRASH");
  ++stats_.crashes;
  nodes_[i].up = false;
  nodes_[i].member.reset();
}

void PairSimulation::restart(int i) {
  Node& n = nodes_[i];
  ++n.incarnation;
  log(n.config.self + " RESTART incarnation " + std::to_string(n.incarnation));
  n.up = true;
  n.authority_free_at = now_;
  n.member = std::make_unique<PairMember>(n.config, n.incarnation, now_);
}

void PairSimulation::inject_faults() {
  if (faults_.etcd) {
    if (chance(faults_.etcd_outage_toggle)) {
      etcd_up_ = !etcd_up_;
      stats_.etcd_outages += etcd_up_ ? 0 : 1;
      log(etcd_up_ ? "etcd back" : "ETCD DOWN");
    }
    if (etcd_up_ && chance(faults_.etcd_leader_change)) {
      ++stats_.etcd_leader_changes;
      etcd_.leader_change(now_);
      log("etcd leader change");
    }
    if (chance(faults_.etcd_unrelated_write)) etcd_.unrelated_write();
  }
  for (int i = 0; i < 2; ++i) {
    if (chance(faults_.link_toggle)) {
      link_ok_[i] = !link_ok_[i];
      stats_.partitions += link_ok_[i] ? 0 : 1;
      log(nodes_[i].config.self + (link_ok_[i] ? " link healed" : " LINK CUT"));
    }
    if (chance(faults_.san_toggle)) {
      nodes_[i].san_ok = !nodes_[i].san_ok;
      stats_.san_cuts += nodes_[i].san_ok ? 0 : 1;
      log(nodes_[i].config.self + (nodes_[i].san_ok ? " san healed" : " SAN CUT"));
    }
    if (nodes_[i].up ? chance(faults_.crash) : chance(faults_.restart)) {
      nodes_[i].up ? crash(i) : restart(i);
    }
  }
}

void PairSimulation::heal() {
  etcd_up_ = true;
  for (int i = 0; i < 2; ++i) {
    link_ok_[i] = true;
    nodes_[i].san_ok = true;
    if (!nodes_[i].up) restart(i);
  }
  log("HEAL");
}

std::string PairSimulation::run(int64_t ms, bool faults) {
  const int64_t end = now_ + ms;
  while (now_ < end && violation_.empty()) {
    int64_t target = std::min(end, now_ + 1 + rand_ms(faults_.max_step_ms - 1));
    while (!events_.empty() && events_.top().at <= target && violation_.empty()) {
      Event ev = events_.top();
      events_.pop();
      now_ = std::max(now_, ev.at);
      ev.fn();
    }
    now_ = target;
    // etcd's leader revokes expired leases (and their keys) on its own schedule.
    while (faults_.etcd && now_ >= next_revoke_at_) {
      if (etcd_up_) etcd_.revoke_expired(now_);
      next_revoke_at_ += EtcdStoreModel::kRevokeEveryMs;
    }
    if (faults) inject_faults();
    for (int i = 0; i < 2; ++i) {
      if (!nodes_[i].up) continue;
      membership::PairState before = nodes_[i].member->state();
      nodes_[i].member->tick(now_);
      if (nodes_[i].member->state() != before) {
        log(nodes_[i].config.self + " state " +
            membership::pair_state_name(nodes_[i].member->state()));
      }
      carry_out(i);
    }
  }
  return violation_;
}

std::string PairSimulation::check_converged() const {
  for (int i = 0; i < 2; ++i) {
    for (uint32_t v : nodes_[i].config.home) {
      for (int j = 0; j < 2; ++j) {
        bool serves = nodes_[j].up && nodes_[j].member->serving(v, now_);
        if (serves != (i == j)) {
          return "volume " + std::to_string(v) + " (home " + nodes_[i].config.self + ") is " +
                 (serves ? "" : "not ") + "served by " + nodes_[j].config.self + " (state " +
                 (nodes_[j].up ? membership::pair_state_name(nodes_[j].member->state())
                               : "down") +
                 ")";
        }
      }
    }
  }
  return "";
}

}  // namespace nasd::cluster::testing
