#include "tests/cluster/cluster_simulation.h"

#include <algorithm>

namespace nasd::cluster::testing {

using membership::ClusterMember;
using membership::LeaseAnswer;
using membership::LeaseVerdict;
using membership::MemberAction;

ClusterSimulation::ClusterSimulation(uint64_t seed, ClusterFaults faults,
                                     std::vector<membership::ClusterMemberConfig> configs,
                                     bool trace)
    : rng_(seed), faults_(faults), tracing_(trace) {
  for (auto& c : configs) {
    Node n;
    n.config = std::move(c);
    n.member = std::make_unique<ClusterMember>(n.config, 1, now_);
    nodes_.push_back(std::move(n));
  }
  link_ok_.assign(nodes_.size(), std::vector<bool>(nodes_.size(), true));
  moves_ = !nodes_.empty() && nodes_.front().config.placement_from_authority;
  if (moves_) {
    // One EVS per node with volumes, e<node>.
    std::map<std::string, std::string> evs_node;
    std::map<uint32_t, std::string> volume_evs;
    for (const auto& [v, home] : nodes_.front().config.home) {
      evs_node["e" + home] = home;
      volume_evs[v] = "e" + home;
    }
    placement_ = membership::initial_placement(evs_node, volume_evs);
    placement_.version = 1;
  }
}

void ClusterSimulation::log(const std::string& line) {
  if (!tracing_) return;
  trace_.push_back("t=" + std::to_string(now_) + " " + line);
  if (trace_.size() > 300) trace_.pop_front();
}

std::string ClusterSimulation::trace() const {
  std::string out;
  for (const auto& l : trace_) out += l + "\n";
  return out;
}

void ClusterSimulation::schedule(int64_t at, std::function<void()> fn) {
  events_.push(Event{at, next_seq_++, std::move(fn)});
}

void ClusterSimulation::on_node(int i, uint64_t inc, std::function<void()> fn) {
  if (!alive(i, inc)) return;
  if (nodes_[i].paused_until > now_) {
    // Stopped: it happens when the process runs again (in arrival order).
    schedule(nodes_[i].paused_until, [this, i, inc, fn] { on_node(i, inc, fn); });
    return;
  }
  fn();
}

int ClusterSimulation::index_of(const std::string& name) const {
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].config.self == name) return static_cast<int>(i);
  return -1;
}

void ClusterSimulation::carry_out(int i) {
  Node& n = nodes_[i];
  if (!n.up) return;
  const std::string name = n.config.self;
  const uint64_t inc = n.incarnation;
  for (const MemberAction& a : n.member->take_actions()) {
    switch (a.kind) {
      case MemberAction::Kind::SendHeartbeat: {
        const int to = index_of(a.node);
        if (to < 0 || !link_ok_[i][to] || chance(faults_.loss)) break;
        membership::Heartbeat hb = n.member->heartbeat();
        schedule(now_ + 1 + rand_ms(faults_.max_net_delay_ms), [this, to, hb] {
          if (!nodes_[to].up) return;
          const uint64_t to_inc = nodes_[to].incarnation;
          on_node(to, to_inc, [this, to, hb] {
            nodes_[to].member->heartbeat_received(now_, hb);
            carry_out(to);
          });
        });
        break;
      }
      case MemberAction::Kind::AcquireLease:
      case MemberAction::Kind::ReleaseLease: {
        if (faults_.etcd) {
          etcd_request(i, inc, a);
          break;
        }
        const bool acquire = a.kind == MemberAction::Kind::AcquireLease;
        log(name + (acquire ? " acquire " : " release ") + std::to_string(a.volume));
        int64_t at = std::max(n.authority_free_at, now_ + rand_ms(faults_.max_authority_delay_ms));
        n.authority_free_at = at;
        schedule(at, [this, i, inc, a, acquire, name] {
          // A request already sent reaches the storage even if its sender is now stopped.
          if (!alive(i, inc)) return;
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
            on_node(i, inc, [this, i, a, answer] {
              nodes_[i].member->lease_answered(now_, a.volume, a.request, answer);
              carry_out(i);
            });
          });
        });
        break;
      }
      case MemberAction::Kind::Serve: {
        if (!a.node.empty()) ++stats_.takeovers;
        log(name + " serve " + std::to_string(a.volume) + (a.node.empty() ? "" : " replaying " + a.node));
        if (!a.node.empty() && !n.config.covers.count(a.node) && violation_.empty())
          violation_ = name + " replays " + a.node + "'s mirror, which it does not hold";
        auto dirty = dirty_.find(a.volume);
        if (dirty != dirty_.end() && dirty->second != name && dirty->second != a.node) {
          const int d = index_of(dirty->second);
          if (nodes_[d].config.covers.count(name)) {
            ++stats_.known_gap_opens;
          } else if (violation_.empty()) {
            violation_ = "LOST: " + name + " opens volume " + std::to_string(a.volume) +
                         " while " + dirty->second + "'s NVRAM holds records of it (replaying " +
                         (a.node.empty() ? "nothing" : a.node) + ") at t=" + std::to_string(now_);
          }
        }
        dirty_[a.volume] = name;
        schedule(now_ + rand_ms(faults_.max_open_ms), [this, i, inc, a] {
          on_node(i, inc, [this, i, a] {
            nodes_[i].member->volume_ready(now_, a.volume);
            carry_out(i);
          });
        });
        break;
      }
      case MemberAction::Kind::Unserve:
        log(name + " unserve " + std::to_string(a.volume));
        schedule(now_ + rand_ms(faults_.max_open_ms), [this, i, inc, a] {
          on_node(i, inc, [this, i, a] {
            bool was_closing = nodes_[i].member->may_serve(a.volume, now_);
            // A close under the lease flushes everything, unless the flush fails.
            const bool clean = was_closing && !chance(faults_.dirty_close);
            auto dirty = dirty_.find(a.volume);
            if (clean && dirty != dirty_.end() && dirty->second == nodes_[i].config.self)
              dirty_.erase(dirty);
            nodes_[i].member->volume_closed(
                now_, a.volume, clean || (was_closing && faults_.failed_flush_reported_clean));
            if (was_closing && !nodes_[i].member->may_serve(a.volume, now_)) ++stats_.failbacks;
            carry_out(i);
          });
        });
        break;
      case MemberAction::Kind::Route:
        break;  // a forwarding hint: no effect on who owns what
      case MemberAction::Kind::ReadPlacement:
        if (moves_) read_placement(i, a.request);
        break;
      case MemberAction::Kind::HandOver: {
        log(name + " hand over " + std::to_string(a.volume) + " epoch " + std::to_string(a.epoch));
        int64_t at = std::max(n.authority_free_at, now_ + rand_ms(faults_.max_authority_delay_ms));
        n.authority_free_at = at;
        schedule(at, [this, i, inc, a, name] {
          if (!alive(i, inc)) return;
          bool done = false;
          bool reached = nodes_[i].san_ok;
          if (reached) {
            const membership::Lease& lease = authority_[a.volume];
            const bool holds =
                lease.holder == name && lease.epoch == a.epoch && lease.expires_ms > now_;
            membership::Placement next = placement_;
            if ((holds || !faults_.handover_checks_lease) &&
                membership::mark_handed(next, a.volume).empty()) {
              const bool committed = !next.moving(a.volume);
              next.version = placement_.version + 1;
              placement_ = next;
              done = true;
              ++stats_.handovers;
              if (committed) ++stats_.moves_committed;
              log(name + " handed " + std::to_string(a.volume) + (committed ? " (commit)" : ""));
            }
          }
          const membership::Placement seen = placement_;
          schedule(now_ + rand_ms(faults_.max_authority_delay_ms), [this, i, inc, a, done, reached, seen] {
            on_node(i, inc, [this, i, a, done, reached, seen] {
              if (reached) nodes_[i].member->placement_changed(now_, seen);
              nodes_[i].member->handover_answered(now_, a.volume, a.request, done);
              carry_out(i);
            });
          });
        });
        break;
      }
    }
  }
  if (violation_.empty()) violation_ = check_safety();
}

void ClusterSimulation::etcd_answer(int i, uint64_t inc, const MemberAction& a, LeaseAnswer answer) {
  if (answer.verdict == LeaseVerdict::Granted) {
    // A new holder's epoch is above every earlier one; a holder keeps its epoch.
    membership::Lease& last = last_grant_[a.volume];
    const bool same = last.holder == answer.lease.holder;
    if ((same ? answer.lease.epoch < last.epoch : answer.lease.epoch <= last.epoch) &&
        violation_.empty())
      violation_ = "epoch " + std::to_string(answer.lease.epoch) + " granted to " +
                   answer.lease.holder + " for volume " + std::to_string(a.volume) +
                   " is not above " + last.holder + "'s " + std::to_string(last.epoch);
    last = answer.lease;
  }
  schedule(now_ + rand_ms(faults_.max_authority_delay_ms), [this, i, inc, a, answer] {
    on_node(i, inc, [this, i, a, answer] {
      nodes_[i].member->lease_answered(now_, a.volume, a.request, answer);
      carry_out(i);
    });
  });
}

void ClusterSimulation::etcd_request(int i, uint64_t inc, const MemberAction& a) {
  Node& n = nodes_[i];
  const std::string name = n.config.self;
  const std::string key = "volume-" + std::to_string(a.volume);
  const bool acquire = a.kind == MemberAction::Kind::AcquireLease;
  log(name + (acquire ? " etcd acquire " : " etcd release ") + std::to_string(a.volume));
  // Two requests to etcd, each delayed; the node's lease calls stay FIFO.
  const int64_t read_at =
      std::max(n.authority_free_at, now_ + rand_ms(faults_.max_authority_delay_ms));
  const int64_t write_at = read_at + rand_ms(faults_.max_authority_delay_ms);
  n.authority_free_at = write_at;
  const int64_t ttl_s = (n.config.lease_ms + 999) / 1000;
  const LeaseAnswer down{LeaseVerdict::Unreachable, {}, "etcd down"};
  schedule(read_at, [=, this] {
    if (!alive(i, inc)) return;  // a request already sent reaches etcd even from a paused node
    if (!nodes_[i].san_ok || !etcd_up_) {
      if (acquire) etcd_answer(i, inc, a, down);
      return;
    }
    const std::optional<EtcdStoreModel::Key> seen = etcd_.get(key);
    // The second request is sent by the node once it has the answer: not while it is paused.
    schedule(write_at, [=, this] {
      on_node(i, inc, [=, this] {
        if (!nodes_[i].san_ok || !etcd_up_) {
          if (acquire) etcd_answer(i, inc, a, down);
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
          const int64_t created = faults_.etcd_cas ? etcd_.create_if_absent(key, name, lease)
                                                   : etcd_.put(key, name, lease);  // BROKEN
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
  });
}

std::string ClusterSimulation::check_safety() const {
  // Checked at the simulation's one true time: a paused node that still "trusts" a lease by its
  // frozen view counts, because a request that reached it would be served.
  std::map<uint32_t, std::string> trusted_by;
  for (const Node& n : nodes_) {
    if (!n.up) continue;
    for (uint32_t v : n.member->candidates()) {
      if (!n.member->may_serve(v, now_)) continue;
      auto [it, first] = trusted_by.emplace(v, n.config.self);
      if (!first)
        return "SPLIT BRAIN: volume " + std::to_string(v) + " trusted by " + it->second +
               " and " + n.config.self + " at t=" + std::to_string(now_);
      if (!faults_.fencing) continue;
      if (faults_.etcd) {
        if (!etcd_.held_by("volume-" + std::to_string(v), n.config.self, now_))
          return n.config.self + " trusts a lease on volume " + std::to_string(v) +
                 " that etcd does not give it at t=" + std::to_string(now_);
        continue;
      }
      auto lease = authority_.find(v);
      if (lease == authority_.end() || lease->second.holder != n.config.self ||
          lease->second.expires_ms <= now_)
        return n.config.self + " trusts a lease on volume " + std::to_string(v) +
               " that the authority does not give it at t=" + std::to_string(now_);
    }
  }
  return "";
}

void ClusterSimulation::read_placement(int i, uint64_t request) {
  Node& n = nodes_[i];
  const uint64_t inc = n.incarnation;
  schedule(now_ + 1 + rand_ms(faults_.max_authority_delay_ms), [this, i, inc, request] {
    // A read already sent reaches the authority even if its sender is now stopped.
    if (!alive(i, inc)) return;
    const bool ok = nodes_[i].san_ok;
    const membership::Placement seen = placement_;
    schedule(now_ + rand_ms(faults_.max_authority_delay_ms), [this, i, inc, request, ok, seen] {
      on_node(i, inc, [this, i, request, ok, seen] {
        nodes_[i].member->placement_read(now_, request, ok, seen);
        carry_out(i);
      });
    });
  });
}

void ClusterSimulation::admin_moves() {
  std::vector<std::string> names;
  for (const Node& n : nodes_) names.push_back(n.config.self);
  if (chance(faults_.move)) {
    membership::Placement next = placement_;
    std::string why;
    if (chance(0.5) && !next.evs.empty()) {
      auto e = next.evs.begin();
      std::advance(e, static_cast<long>(rng_() % next.evs.size()));
      const std::string to = names[rng_() % names.size()];
      why = membership::propose_evs_move(next, e->first, to, names);
      if (why.empty()) log("ADMIN evs move " + e->first + " -> " + to);
    } else if (!next.volumes.empty()) {
      auto v = next.volumes.begin();
      std::advance(v, static_cast<long>(rng_() % next.volumes.size()));
      auto e = next.evs.begin();
      std::advance(e, static_cast<long>(rng_() % next.evs.size()));
      why = membership::propose_volume_move(next, v->first, e->first);
      if (why.empty()) log("ADMIN volume move " + std::to_string(v->first) + " -> " + e->first);
    }
    if (why.empty()) {
      next.version = placement_.version + 1;
      placement_ = next;
      ++stats_.moves_proposed;
    }
  }
  if (chance(faults_.cancel)) {
    membership::Placement next = placement_;
    std::string why = "nothing";
    for (auto& [name, e] : next.evs)
      if (!e.target.empty() && why != "") why = membership::cancel_evs_move(next, name);
    for (auto& [id, v] : next.volumes)
      if (!v.target_evs.empty() && why != "") why = membership::cancel_volume_move(next, id);
    if (why.empty()) {
      next.version = placement_.version + 1;
      placement_ = next;
      ++stats_.moves_cancelled;
      log("ADMIN cancel");
    }
  }
}

void ClusterSimulation::crash(int i) {
  log(nodes_[i].config.self + " CRASH");
  ++stats_.crashes;
  nodes_[i].up = false;
  nodes_[i].paused_until = 0;
  nodes_[i].member.reset();
}

void ClusterSimulation::kill(int i) {
  if (nodes_[i].up) crash(i);
  nodes_[i].killed = true;
}

void ClusterSimulation::restart(int i) {
  Node& n = nodes_[i];
  ++n.incarnation;
  log(n.config.self + " RESTART incarnation " + std::to_string(n.incarnation));
  n.up = true;
  n.killed = false;
  n.authority_free_at = now_;
  n.member = std::make_unique<ClusterMember>(n.config, n.incarnation, now_);
}

void ClusterSimulation::inject_faults() {
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
  const size_t count = nodes_.size();
  for (size_t i = 0; i < count; ++i) {
    for (size_t j = 0; j < count; ++j) {
      if (i == j || !chance(faults_.link_toggle)) continue;
      link_ok_[i][j] = !link_ok_[i][j];
      stats_.partitions += link_ok_[i][j] ? 0 : 1;
      log(nodes_[i].config.self + "->" + nodes_[j].config.self +
          (link_ok_[i][j] ? " link healed" : " LINK CUT"));
    }
    Node& n = nodes_[i];
    if (chance(faults_.san_toggle)) {
      n.san_ok = !n.san_ok;
      stats_.san_cuts += n.san_ok ? 0 : 1;
      log(n.config.self + (n.san_ok ? " san healed" : " SAN CUT"));
    }
    if (n.up && n.paused_until <= now_ && chance(faults_.pause)) {
      n.paused_until = now_ + 1 + rand_ms(faults_.max_pause_ms);
      ++stats_.pauses;
      log(n.config.self + " PAUSED until " + std::to_string(n.paused_until));
    }
    if (n.killed) continue;
    if (n.up ? chance(faults_.crash) : chance(faults_.restart)) n.up ? crash(i) : restart(i);
  }
}

void ClusterSimulation::heal() {
  etcd_up_ = true;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    for (size_t j = 0; j < nodes_.size(); ++j) link_ok_[i][j] = true;
    nodes_[i].san_ok = true;
    nodes_[i].paused_until = std::min(nodes_[i].paused_until, now_);
    if (!nodes_[i].up) restart(static_cast<int>(i));
  }
  log("HEAL");
}

std::string ClusterSimulation::run(int64_t ms, bool faults) {
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
    if (faults && moves_) admin_moves();
    for (size_t i = 0; i < nodes_.size(); ++i) {
      Node& n = nodes_[i];
      if (!n.up || n.paused_until > now_) continue;
      auto before = n.member->state();
      n.member->tick(now_);
      if (n.member->state() != before)
        log(n.config.self + " state " + membership::member_state_name(n.member->state()));
      carry_out(static_cast<int>(i));
    }
    if (violation_.empty()) violation_ = check_safety();
  }
  return violation_;
}

std::string ClusterSimulation::check_placed() const {
  const auto pending = placement_.pending_moves();
  if (!pending.empty()) return "a move is still pending: " + pending.front();
  for (const auto& [v, vol] : placement_.volumes) {
    const std::string home = placement_.designated(v);
    for (const Node& n : nodes_) {
      bool serves = n.up && n.member->serving(v, now_);
      if (serves != (n.config.self == home))
        return "volume " + std::to_string(v) + " (designated " + home + ") is " +
               (serves ? "" : "not ") + "served by " + n.config.self + " (state " +
               (n.up ? membership::member_state_name(n.member->state()) : "down") + ")";
    }
  }
  return "";
}

std::string ClusterSimulation::check_converged() const {
  for (const auto& [v, home] : nodes_.front().config.home) {
    for (const Node& n : nodes_) {
      bool serves = n.up && n.member->serving(v, now_);
      if (serves != (n.config.self == home))
        return "volume " + std::to_string(v) + " (home " + home + ") is " + (serves ? "" : "not ") +
               "served by " + n.config.self + " (state " +
               (n.up ? membership::member_state_name(n.member->state()) : "down") + ")";
    }
  }
  return "";
}

std::string ClusterSimulation::check_taken_over() const {
  for (const auto& [v, home] : nodes_.front().config.home) {
    const Node& h = nodes_[index_of(home)];
    std::vector<std::string> servers;
    for (const Node& n : nodes_)
      if (n.up && n.member->serving(v, now_)) servers.push_back(n.config.self);
    if (servers.size() != 1)
      return "volume " + std::to_string(v) + " (home " + home + ") is served by " +
             std::to_string(servers.size()) + " nodes";
    if (h.up && servers[0] != home)
      return "volume " + std::to_string(v) + " is served by " + servers[0] + ", not its live home";
    if (!h.up && !nodes_[index_of(servers[0])].config.covers.count(home))
      return "volume " + std::to_string(v) + " is served by " + servers[0] +
             ", which does not cover " + home;
  }
  return "";
}

}  // namespace nasd::cluster::testing
