// Roles (leases, takeover through the fence and the journal close), the journal and its
// mirror, heartbeats and the dispatch of messages. Namespace transactions: coord_namespace.cc;
// tokens and group versions: coord_tokens.cc.
#include "cluster/scaleout/coordination/coord_node.h"

#include <algorithm>
#include <utility>

namespace nasd::scaleout::coord {

std::string validate(const CoordConfig& c) {
  if (c.self == 0) return "self must be a node id above 0";
  if (c.nodes.size() < 2) return "at least two primaries";
  if (std::find(c.nodes.begin(), c.nodes.end(), c.self) == c.nodes.end()) return "self not in nodes";
  if (c.slots == 0 || c.slots > 4096) return "slots must be 1..4096";
  if (c.units < 1 || static_cast<size_t>(c.units) > c.nodes.size()) return "units must be 1..nodes";
  if (c.margin_ms <= 0 || c.margin_ms >= c.lease_ms) return "margin must be inside the lease";
  if (c.renew_ms >= c.lease_ms - c.margin_ms) return "renew before the trust ends";
  return "";
}

CoordNode::CoordNode(CoordConfig config, uint64_t incarnation, int64_t now_ms)
    : config_(std::move(config)), incarnation_(incarnation), now_(now_ms) {
  // Every node counts as alive at start, so designations agree before the first heartbeats.
  for (NodeId n : config_.nodes) heard_[n] = now_ms;
  next_seq_ = incarnation_ << 32 | 1;
  next_request_ = incarnation_ << 32 | 1;
  next_version_ = incarnation_ << 32 | 1;
}

NodeId CoordNode::cover_of(NodeId n) const {
  const auto& v = config_.nodes;
  auto it = std::find(v.begin(), v.end(), n);
  if (it == v.end()) return 0;
  ++it;
  return it == v.end() ? v.front() : *it;
}

std::vector<NodeId> CoordNode::unit_nodes(uint64_t file, uint32_t group) const {
  std::vector<std::pair<uint64_t, NodeId>> order;
  for (NodeId n : config_.nodes) order.push_back({mix64(mix64(file ^ mix64(group)) ^ n), n});
  std::sort(order.rbegin(), order.rend());
  std::vector<NodeId> out;
  for (int i = 0; i < config_.units; ++i) out.push_back(order[i].second);
  return out;
}

std::vector<NodeId> CoordNode::alive() const {
  std::vector<NodeId> out;
  for (const auto& [n, at] : heard_)
    if (n == config_.self || now_ - at < config_.failure_ms) out.push_back(n);
  return out;
}

bool CoordNode::wants(Slot slot) const { return designated(slot, alive()) == config_.self; }

bool CoordNode::serving(Slot slot, int64_t now_ms) const {
  auto it = roles_.find(slot);
  return it != roles_.end() && it->second.phase == Phase::Serving &&
         now_ms < it->second.trusted_until;
}

uint64_t CoordNode::epoch(Slot slot) const {
  auto it = roles_.find(slot);
  return it == roles_.end() ? 0 : it->second.epoch;
}

const Records* CoordNode::slot_state(Slot slot) const {
  auto it = roles_.find(slot);
  return it != roles_.end() && it->second.phase == Phase::Serving ? &it->second.state : nullptr;
}

CoordNode::Role* CoordNode::serving_role(Slot slot) {
  auto it = roles_.find(slot);
  if (it == roles_.end() || it->second.phase != Phase::Serving || now_ >= it->second.trusted_until)
    return nullptr;
  return &it->second;
}

CoordNode::Role* CoordNode::role_at(Slot slot, uint64_t epoch) {
  auto it = roles_.find(slot);
  return it == roles_.end() || it->second.epoch != epoch ? nullptr : &it->second;
}

NodeId CoordNode::route(Slot slot) const {
  if (serving(slot, now_)) return config_.self;
  auto it = routes_.find(slot);
  if (it != routes_.end() && now_ - heard_.at(it->second) < config_.failure_ms) return it->second;
  return designated(slot, alive());
}

void CoordNode::send(Msg m) {
  m.from = config_.self;
  out_.push_back(std::move(m));
}

std::vector<Msg> CoordNode::take_messages() { return std::exchange(out_, {}); }
std::vector<LeaseRequest> CoordNode::take_lease_requests() { return std::exchange(lease_out_, {}); }
std::vector<ClientOut> CoordNode::take_replies() { return std::exchange(replies_, {}); }

void CoordNode::reply(uint32_t client, const ClientReply& rep) { replies_.push_back({client, rep}); }

std::string CoordNode::describe() const {
  static const char* const phases[] = {"acquiring", "opening", "replaying", "flushing", "serving"};
  std::string out = "n" + std::to_string(config_.self) + ":";
  for (const auto& [s, r] : roles_)
    out += " slot " + std::to_string(s) + " " + phases[static_cast<int>(r.phase)] + " e" +
           std::to_string(r.epoch) + (now_ < r.trusted_until ? "" : " (untrusted)") +
           " waiting " + std::to_string(r.waiting.size()) + " txs " + std::to_string(r.txs.size()) +
           " forces " + std::to_string(r.forces.size()) + ";";
  out += " journal pending " + std::to_string(appends_.size());
  if (!appends_.empty())
    out += " (first " + std::to_string(appends_.begin()->first & 0xffffffff) + " slot " +
           std::to_string(appends_.begin()->second.rec.slot) + ")";
  out += " tokens " + std::to_string(held_.size()) + " unit jobs " + std::to_string(unit_jobs_.size());
  return out;
}

// ---- roles ----

void CoordNode::update_roles() {
  for (Slot s = 0; s < config_.slots; ++s) {
    auto it = roles_.find(s);
    const bool want = wants(s);
    if (it == roles_.end()) {
      if (!want || now_ < retry_at_[s]) continue;
      Role& r = roles_[s];
      r.lease_request = next_request_++;
      r.lease_sent = now_;
      lease_out_.push_back({LeaseRequest::Kind::Acquire, s, r.lease_request});
      continue;
    }
    Role& r = it->second;
    if (!want) {
      drop(s, true);  // designated elsewhere now: hand it on (the next holder replays)
      continue;
    }
    if (r.phase == Phase::Acquiring) {
      if (now_ - r.lease_sent > config_.lease_ms) drop(s, true);  // no answer: start again
      continue;
    }
    if (now_ >= r.trusted_until) {
      drop(s, true);
      continue;
    }
    if (now_ >= r.renew_at && r.lease_request == 0) {
      r.lease_request = next_request_++;
      r.lease_sent = now_;
      lease_out_.push_back({LeaseRequest::Kind::Acquire, s, r.lease_request});
    }
  }
}

void CoordNode::drop(Slot slot, bool release) {
  auto it = roles_.find(slot);
  if (it == roles_.end()) return;
  roles_.erase(it);
  retry_at_[slot] = now_ + config_.retry_ms;
  if (release) lease_out_.push_back({LeaseRequest::Kind::Release, slot, 0});
}

void CoordNode::lease_answered(int64_t now_ms, Slot slot, uint64_t request, bool granted,
                               uint64_t epoch) {
  now_ = now_ms;
  auto it = roles_.find(slot);
  if (it == roles_.end()) {
    // An answer for a role given up meanwhile: give the lease back.
    if (granted) lease_out_.push_back({LeaseRequest::Kind::Release, slot, 0});
    return;
  }
  // A stale answer (of an earlier role of this slot) while a newer request is out: the newer
  // answer decides. Releasing here would free the lease the current role goes on trusting.
  if (it->second.lease_request != request) return;
  Role& r = it->second;
  r.lease_request = 0;
  if (!granted) {
    drop(slot, false);
    return;
  }
  if (r.phase == Phase::Acquiring) {
    // A role opens only under an epoch above any this node served the slot under: the
    // takeover reads the journal below its own epoch, which must include our earlier records.
    if (epoch <= last_epoch_[slot]) {
      drop(slot, true);
      return;
    }
    last_epoch_[slot] = epoch;
    r.epoch = epoch;
    r.granted_at = now_;
    r.trusted_until = r.lease_sent + config_.lease_ms - config_.margin_ms;
    r.renew_at = now_ + config_.renew_ms;
    start_open(slot, r);
    return;
  }
  if (epoch != r.epoch) {  // cannot happen while we hold it; never serve under two epochs
    drop(slot, true);
    return;
  }
  r.trusted_until = r.lease_sent + config_.lease_ms - config_.margin_ms;
  r.renew_at = now_ + config_.renew_ms;
}

void CoordNode::start_open(Slot slot, Role& r) {
  r.phase = Phase::Opening;
  r.request = next_request_++;
  r.opened.clear();
  resend_role(slot, r);
}

// Sends the takeover's current round again to whoever has not answered.
void CoordNode::resend_role(Slot slot, Role& r) {
  r.sent = now_;
  for (NodeId n : config_.nodes) {
    Msg m;
    m.to = n;
    m.slot = slot;
    m.epoch = r.epoch;
    m.request = r.request;
    if (r.phase == Phase::Opening && !r.opened.count(n)) {
      m.kind = Msg::Kind::Open;
      send(m);
    } else if (r.phase == Phase::Flushing && !r.acked.count(n)) {
      m.kind = Msg::Kind::Put;
      m.recs = r.to_flush;
      send(m);
    }
  }
  if (r.phase == Phase::Replaying) {
    Msg m;
    m.kind = Msg::Kind::ReadJournal;
    m.to = cover_of(r.journal);
    m.slot = slot;
    m.request = r.request;
    m.origin = r.journal;
    m.stamp = Stamp{r.epoch, 0};
    send(m);
  }
}

void CoordNode::opened(Slot slot, Role& r) {
  r.state.clear();
  for (const auto& [n, recs] : r.opened)
    for (const Rec& rec : recs) merge(r.state, rec);
  r.opened.clear();
  const Value* head = get(r, Key{KeyKind::Head});
  r.journal = head ? head->journal : 0;
  if (r.journal == 0) {
    replayed(slot, r, {});
    return;
  }
  r.phase = Phase::Replaying;
  r.request = next_request_++;
  resend_role(slot, r);
}

void CoordNode::replayed(Slot slot, Role& r, const std::vector<JournalRec>& recs) {
  Records changed;
  for (const JournalRec& j : recs) {
    if (j.write) continue;  // an initiator's WRITE: taken by the forced revocation
    for (const Rec& rec : j.after)
      if (merge(r.state, rec)) changed[rec.key] = rec;
  }
  Value head;
  if (const Value* h = get(r, Key{KeyKind::Head})) head = *h;
  head.live = true;
  head.journal = config_.self;
  std::vector<Rec> flush;
  for (const auto& [k, rec] : changed) flush.push_back(rec);
  if (slot == 0 && !get(r, Key{KeyKind::Inode, kRootIno})) {  // a new volume: the root
    Value root;
    root.live = true;
    root.is_dir = true;
    root.nlink = 1;
    root.parent = kRootIno;
    Rec rr = make(r, Key{KeyKind::Inode, kRootIno}, root);
    rr.seq = next_seq_++;
    r.state[rr.key] = rr;
    flush.push_back(rr);
  }
  Rec hr = make(r, Key{KeyKind::Head}, head);
  hr.seq = next_seq_++;
  r.state[hr.key] = hr;
  flush.push_back(hr);
  r.to_flush = std::move(flush);
  r.phase = Phase::Flushing;
  r.request = next_request_++;
  r.acked.clear();
  resend_role(slot, r);
}

const Value* CoordNode::get(const Role& r, const Key& k) const {
  auto it = r.state.find(k);
  return it == r.state.end() || !it->second.value.live ? nullptr : &it->second.value;
}

Rec CoordNode::make(Role& r, Key key, Value v) const {
  Rec rec;
  rec.key = std::move(key);
  rec.stamp = Stamp{r.epoch, 0};
  rec.value = std::move(v);
  return rec;
}

// ---- the journal ----

void CoordNode::journal(Slot slot, const Stamp& stamp, std::vector<Rec> after,
                        std::function<void()> then) {
  JournalRec j;
  j.origin = config_.self;
  j.seq = next_seq_++;
  j.slot = slot;
  j.stamp = stamp;
  auto it = roles_.find(slot);
  for (Rec& rec : after) {
    rec.stamp = stamp;
    rec.seq = j.seq;
    if (it != roles_.end()) {
      it->second.state[rec.key] = rec;
      it->second.unsettled[rec.key] = j.seq;
    }
  }
  j.after = std::move(after);
  append(std::move(j), std::move(then));
}

void CoordNode::journal_write(Slot slot, const Stamp& stamp, uint64_t file, uint32_t group,
                              const Version& v, std::function<void()> then) {
  JournalRec j;
  j.origin = config_.self;
  j.seq = next_seq_++;
  j.slot = slot;
  j.stamp = stamp;
  j.write = true;
  j.file = file;
  j.group = group;
  j.version = v;
  append(std::move(j), std::move(then));
}

void CoordNode::append(JournalRec rec, std::function<void()> then) {
  Append& a = appends_[rec.seq];
  a.rec = std::move(rec);
  a.then = std::move(then);
  send_to_mirror(a);
}

void CoordNode::send_to_mirror(Append& a) {
  a.sent = now_;
  Msg m;
  m.kind = Msg::Kind::MirrorAppend;
  m.to = cover_of(config_.self);
  m.jrec = a.rec;
  send(m);
}

void CoordNode::mirror_answered(uint64_t seq, bool ok) {
  auto it = appends_.find(seq);
  if (it == appends_.end() || it->second.acked || it->second.refused) return;
  if (ok) {
    it->second.acked = true;
  } else {
    // Closed at the mirror: a successor took the slot (or the token) over. Nothing more of it
    // may be acknowledged here.
    it->second.refused = true;
    const JournalRec& j = it->second.rec;
    if (j.write) lose_token({j.file, j.group});
    else drop(j.slot, true);
  }
  run_durable();
}

// Runs the continuations of the records now durable: a prefix of the journal, in order.
void CoordNode::run_durable() {
  while (!appends_.empty()) {
    auto it = appends_.begin();
    if (!it->second.acked && !it->second.refused) break;
    Append a = std::move(it->second);
    appends_.erase(it);
    if (!a.acked) continue;
    auto role = roles_.find(a.rec.slot);
    if (role != roles_.end())
      for (const Rec& rec : a.rec.after) {
        auto u = role->second.unsettled.find(rec.key);
        if (u != role->second.unsettled.end() && u->second == a.rec.seq) role->second.unsettled.erase(u);
      }
    if (a.then) a.then();
  }
}

// ---- events ----

void CoordNode::tick(int64_t now_ms) {
  now_ = now_ms;
  if (now_ >= next_heartbeat_) {
    next_heartbeat_ = now_ + config_.heartbeat_ms;
    Msg hb;
    hb.kind = Msg::Kind::Heartbeat;
    for (const auto& [s, r] : roles_)
      if (serving(s, now_)) hb.slots.push_back({s, r.epoch});
    for (NodeId n : config_.nodes)
      if (n != config_.self) {
        hb.to = n;
        send(hb);
      }
  }
  update_roles();
  for (auto& [seq, a] : appends_)
    if (!a.acked && !a.refused && now_ - a.sent >= config_.retry_ms) send_to_mirror(a);
  std::vector<Slot> slots;
  for (const auto& [s, r] : roles_) slots.push_back(s);
  for (Slot s : slots) {
    auto it = roles_.find(s);
    if (it == roles_.end()) continue;
    Role& r = it->second;
    if (r.phase == Phase::Opening || r.phase == Phase::Replaying || r.phase == Phase::Flushing) {
      if (now_ - r.sent >= config_.retry_ms) resend_role(s, r);
      continue;
    }
    if (r.phase != Phase::Serving || !serving_role(s)) continue;
    pump_txs(s, r);
    if (roles_.count(s)) pump_forces(s, r);
    if (roles_.count(s)) {
      std::vector<NodeId> late;
      for (auto& [g, rv] : r.revoking) {
        const Value* tok = get(r, Key{KeyKind::Token, g.first, g.second});
        if (tok && now_ - rv.since >= config_.revoke_ms) late.push_back(tok->holder);
      }
      for (NodeId h : late) start_force(s, r, h);
    }
    if (roles_.count(s)) serve_waiting(s, r);
  }
  pump_units();
  pump_held();
}

void CoordNode::receive(int64_t now_ms, const Msg& m) {
  now_ = now_ms;
  if (m.from != 0 && heard_.count(m.from)) heard_[m.from] = std::max(heard_[m.from], now_);
  switch (m.kind) {
    case Msg::Kind::Heartbeat:
      for (const auto& [s, e] : m.slots) routes_[s] = m.from;
      return;
    case Msg::Kind::OpenReply: {
      auto it = roles_.find(m.slot);
      if (it == roles_.end() || it->second.phase != Phase::Opening || it->second.request != m.request)
        return;
      if (!m.ok) {  // a newer epoch was there already: this grant is stale
        drop(m.slot, true);
        return;
      }
      Role& r = it->second;
      r.opened[m.from] = m.recs;
      if (r.opened.size() * 2 > config_.nodes.size()) opened(m.slot, r);
      return;
    }
    case Msg::Kind::JournalReply: {
      auto it = roles_.find(m.slot);
      if (it == roles_.end()) return;
      Role& r = it->second;
      if (r.phase == Phase::Replaying && r.request == m.request) {
        replayed(m.slot, r, m.jrecs);
        return;
      }
      if (r.phase == Phase::Serving) {
        auto f = r.forces.find(m.origin);
        if (f != r.forces.end() && f->second.request == m.request && !f->second.read)
          forced_read(m.slot, r, m.origin, m.jrecs);
      }
      return;
    }
    case Msg::Kind::PutReply: {
      auto it = roles_.find(m.slot);
      if (it == roles_.end() || it->second.phase != Phase::Flushing || it->second.request != m.request)
        return;
      if (!m.ok) {
        drop(m.slot, true);
        return;
      }
      Role& r = it->second;
      r.acked.insert(m.from);
      if (r.acked.size() * 2 > config_.nodes.size()) start_serving(m.slot, r);
      return;
    }
    case Msg::Kind::MirrorReply:
      mirror_answered(m.request, m.ok);
      return;
    case Msg::Kind::UnitReply:
      on_unit_reply(m);
      return;
    case Msg::Kind::Prepare: on_prepare(m); return;
    case Msg::Kind::Vote: on_vote(m); return;
    case Msg::Kind::Decide: on_decide(m); return;
    case Msg::Kind::Decided: on_decided(m); return;
    case Msg::Kind::Query: on_query(m); return;
    case Msg::Kind::TokenRequest: on_token_request(m); return;
    case Msg::Kind::Grant: on_grant(m); return;
    case Msg::Kind::Revoke: on_revoke(m); return;
    case Msg::Kind::Released: on_released(m); return;
    case Msg::Kind::Record: on_record(m); return;
    case Msg::Kind::Recorded: on_recorded(m); return;
    case Msg::Kind::Lookup: on_lookup(m); return;
    case Msg::Kind::LookedUp: on_looked_up(m); return;
    default:
      return;  // storage kinds are served by serve_storage, not here
  }
}

void CoordNode::client_call(int64_t now_ms, uint32_t client, const ClientOp& op) {
  now_ = now_ms;
  if (op.kind == OpKind::Write) {
    run_write(client, op);
    return;
  }
  const Slot slot = op_slot(op);
  Role* r = serving_role(slot);
  if (!r) {
    ClientReply rep;
    rep.id = op.id;
    rep.status = OpStatus::Retry;
    rep.hint = route(slot);
    reply(client, rep);
    return;
  }
  run_op(slot, *r, client, op);
}

// Serving from here: every lock and token the records name is live again.
void CoordNode::start_serving(Slot slot, Role& r) {
  r.phase = Phase::Serving;
  r.to_flush.clear();
  r.acked.clear();
  takeover_ms_.push_back(now_ - r.granted_at);
  std::vector<NodeId> stale_holders;
  for (const auto& [k, rec] : r.state) {
    if (!rec.value.live) continue;
    if (k.kind == KeyKind::Token && rec.value.stamp.epoch < r.epoch)
      stale_holders.push_back(rec.value.holder);
    if (k.kind != KeyKind::Tx) continue;
    const Value& v = rec.value;
    const uint64_t tx = k.a;
    if (v.manager == slot) {
      // A transaction managed here: undecided ones are aborted (nobody was told Commit),
      // decided ones are told again until every participant answers.
      Tx t;
      t.op.id = v.op;
      t.client = 0;
      t.started = now_;
      for (const Part& p : v.parts) t.parts[p.slot] = p;
      if (v.tx == TxState::Begun) {
        t.decided = true;
        t.commit = false;
        r.txs[tx] = t;
        Value ab = v;
        ab.tx = TxState::Aborted;
        journal(slot, Stamp{r.epoch, 0}, {make(r, k, ab)}, nullptr);
      } else {
        t.decided = true;
        t.commit = v.tx == TxState::Committed;
        r.txs[tx] = t;
      }
    } else if (v.tx == TxState::Prepared) {
      for (const Part& p : v.parts)
        for (const Change& c : p.changes) lock(r, c, tx);
      r.queries[tx] = 0;
    }
  }
  for (NodeId h : stale_holders) start_force(slot, r, h);
}

}  // namespace nasd::scaleout::coord
