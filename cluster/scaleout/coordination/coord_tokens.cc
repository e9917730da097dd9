// Byte-range tokens and group versions (COORDINATION.md 2). Coordinator side: grants recorded
// in the journal before they are sent, revocation when another node or a READ needs the group,
// forced revocation (the holder's writes closed and read at its mirror, striped and recorded
// here) when the holder does not answer or the token is from an earlier epoch; new group
// versions recorded only from the token's holder. Initiator side: WRITE journaled here under
// the token and acknowledged once mirrored; units put under the token's epoch; the version
// recorded at the coordinator; a revoked token released only once everything written under
// it is recorded.
#include "cluster/scaleout/coordination/coord_node.h"

namespace nasd::scaleout::coord {

// ---- units ----

void CoordNode::put_units(Slot slot, uint64_t epoch, uint64_t file, uint32_t group,
                          const Version& v, std::function<void(bool)> done) {
  const uint64_t id = next_request_++;
  UnitJob& job = unit_jobs_[id];
  job.slot = slot;
  job.epoch = epoch;
  job.file = file;
  job.group = group;
  job.version = v;
  job.done = std::move(done);
  job.sent = INT64_MIN / 2;
  pump_unit_job(id, job);
}

void CoordNode::pump_unit_job(uint64_t id, UnitJob& job) {
  if (now_ - job.sent < config_.retry_ms) return;
  job.sent = now_;
  const std::vector<NodeId> at = unit_nodes(job.file, job.group);
  for (int i = 0; i < static_cast<int>(at.size()); ++i) {
    if (job.acked.count(i)) continue;
    Msg m;
    m.kind = Msg::Kind::UnitPut;
    m.to = at[i];
    m.request = id;
    m.slot = job.slot;
    m.epoch = job.epoch;
    m.unit = UnitId{job.file, job.group, job.version, static_cast<uint16_t>(i)};
    send(m);
  }
}

void CoordNode::pump_units() {
  for (auto& [id, job] : unit_jobs_) pump_unit_job(id, job);
}

void CoordNode::on_unit_reply(const Msg& m) {
  auto it = unit_jobs_.find(m.request);
  if (it == unit_jobs_.end()) return;
  UnitJob& job = it->second;
  if (!m.ok) {  // fenced: a newer epoch of the slot has been at that store
    auto done = std::move(job.done);
    unit_jobs_.erase(it);
    if (done) done(false);
    return;
  }
  job.acked.insert(m.unit.index);
  if (static_cast<int>(job.acked.size()) < config_.units) return;
  auto done = std::move(job.done);
  unit_jobs_.erase(it);
  if (done) done(true);
}

// ---- coordinator side ----

bool CoordNode::unsettled(const Role& r, const Key& k) const { return r.unsettled.count(k) > 0; }

bool CoordNode::group_free(Slot slot, Role& r, uint64_t file, uint32_t group) {
  const Key k{KeyKind::Token, file, group};
  const Value* tok = get(r, k);
  if (!tok) return !unsettled(r, k);
  if (tok->stamp.epoch < r.epoch) {  // from an earlier coordinator: revoked by force
    start_force(slot, r, tok->holder);
    return false;
  }
  auto it = r.revoking.try_emplace({file, group}, Revoking{now_, INT64_MIN / 2}).first;
  if (now_ - it->second.sent >= config_.retry_ms) {
    it->second.sent = now_;
    Msg m;
    m.kind = Msg::Kind::Revoke;
    m.to = tok->holder;
    m.file = file;
    m.group = group;
    m.stamp = tok->stamp;
    m.slot = slot;
    send(m);
  }
  return false;
}

void CoordNode::grant(Slot slot, Role& r, const Pending& p) {
  const NodeId to = p.requester;
  const uint64_t file = p.op.ino, request = p.request;
  const uint32_t group = p.op.group;
  Value v;
  v.live = true;
  v.holder = to;
  v.holder_incarnation = p.incarnation;
  v.stamp = Stamp{r.epoch, r.next_grant++};
  const uint64_t epoch = r.epoch;
  Msg m;
  m.kind = Msg::Kind::Grant;
  m.to = to;
  m.file = file;
  m.group = group;
  m.stamp = v.stamp;
  m.request = request;
  m.slot = slot;
  journal(slot, Stamp{epoch, 0}, {make(r, Key{KeyKind::Token, file, group}, v)},
          [this, slot, epoch, m] {
            Role* r = serving_role(slot);
            if (r && r->epoch == epoch) send(m);
          });
}

void CoordNode::on_token_request(const Msg& m) {
  const Slot slot = slot_of(m.file);
  Role* r = serving_role(slot);
  if (!r) return;
  const Value* file = get(*r, Key{KeyKind::Inode, m.file});
  if (!file || file->is_dir) return;
  const Key k{KeyKind::Token, m.file, m.group};
  const Value* tok = get(*r, k);
  if (tok && tok->holder == m.from && tok->holder_incarnation == m.incarnation &&
      tok->stamp == m.stamp) {
    // The requester released this token cleanly and its Released was lost: it is free.
    r->revoking.erase({m.file, m.group});
    journal(slot, Stamp{r->epoch, 0}, {make(*r, k, Value{})}, nullptr);
    tok = nullptr;
  }
  if (tok && tok->holder == m.from && tok->holder_incarnation == m.incarnation &&
      tok->stamp.epoch == r->epoch) {
    if (unsettled(*r, k)) return;  // the grant goes out once its record is durable
    Msg g = answer(m, Msg::Kind::Grant);
    g.stamp = tok->stamp;
    g.slot = slot;
    send(g);
    return;
  }
  for (Pending& p : r->waiting)
    if (p.requester == m.from && p.op.ino == m.file && p.op.group == m.group) {
      p.request = m.request;
      p.incarnation = m.incarnation;
      serve_waiting(slot, *r);
      return;
    }
  Pending p;
  p.requester = m.from;
  p.incarnation = m.incarnation;
  p.request = m.request;
  p.op.ino = m.file;
  p.op.group = m.group;
  r->waiting.push_back(p);
  serve_waiting(slot, *r);
}

// Serves, in order, the token requests and READs waiting for their group to be free.
void CoordNode::serve_waiting(Slot slot, Role& r) {
  std::set<std::pair<uint64_t, uint32_t>> granted;
  for (auto it = r.waiting.begin(); it != r.waiting.end();) {
    const std::pair<uint64_t, uint32_t> g{it->op.ino, it->op.group};
    if (granted.count(g) || !group_free(slot, r, g.first, g.second)) {
      ++it;
      continue;
    }
    if (it->requester != 0) {
      granted.insert(g);
      grant(slot, r, *it);
    } else {
      ClientReply rep;
      rep.id = it->op.id;
      rep.status = OpStatus::Ok;
      if (const Value* v = get(r, Key{KeyKind::Group, g.first, g.second})) rep.version = v->version;
      r.in_flight_ops.erase(it->op.id);
      reply(it->client, rep);
    }
    it = r.waiting.erase(it);
  }
}

void CoordNode::on_released(const Msg& m) {
  const Slot slot = slot_of(m.file);
  Role* r = serving_role(slot);
  if (!r) return;
  const Key k{KeyKind::Token, m.file, m.group};
  const Value* tok = get(*r, k);
  if (!tok || tok->holder != m.from || !(tok->stamp == m.stamp)) return;
  if (!m.ok) {  // the holder does not have it (restarted, or lost it): take its writes
    start_force(slot, *r, m.from);
    return;
  }
  r->revoking.erase({m.file, m.group});
  journal(slot, Stamp{r->epoch, 0}, {make(*r, k, Value{})}, nullptr);
  serve_waiting(slot, *r);
}

void CoordNode::on_record(const Msg& m) {
  const Slot slot = slot_of(m.file);
  Role* r = serving_role(slot);
  if (!r) return;
  Msg rep = answer(m, Msg::Kind::Recorded);
  const Value* tok = get(*r, Key{KeyKind::Token, m.file, m.group});
  const Value* file = get(*r, Key{KeyKind::Inode, m.file});
  if (!tok || tok->holder != m.from || !(tok->stamp == m.stamp) || m.stamp.epoch != r->epoch ||
      !file) {
    rep.ok = false;  // not its token any more: what it wrote is taken by the forced revocation
    send(rep);
    return;
  }
  const Key gk{KeyKind::Group, m.file, m.group};
  const Value* cur = get(*r, gk);
  rep.ok = true;
  if (cur && !(cur->version < m.version)) {
    if (!unsettled(*r, gk)) send(rep);
    return;
  }
  Value v;
  v.live = true;
  v.version = m.version;
  const uint64_t epoch = r->epoch;
  journal(slot, Stamp{epoch, 0}, {make(*r, gk, v)}, [this, slot, epoch, rep] {
    Role* r = serving_role(slot);
    if (r && r->epoch == epoch) send(rep);
  });
}

void CoordNode::start_force(Slot slot, Role& r, NodeId holder) {
  if (r.forces.count(holder)) return;
  Force& f = r.forces[holder];
  f.holder = holder;
  f.below = Stamp{r.epoch, r.next_grant++};
  f.request = next_request_++;
  f.sent = INT64_MIN / 2;
  pump_forces(slot, r);
}

void CoordNode::pump_forces(Slot slot, Role& r) {
  for (auto& [holder, f] : r.forces) {
    if (f.read || now_ - f.sent < config_.retry_ms) continue;
    f.sent = now_;
    Msg m;
    m.kind = Msg::Kind::ReadJournal;
    m.to = cover_of(holder);
    m.slot = slot;
    m.request = f.request;
    m.origin = holder;
    m.stamp = f.below;
    m.writes_only = true;
    send(m);
  }
}

// The holder's writes of the slot, read at its mirror, which refuses any more of them: the
// newest unrecorded version of each group is striped and recorded here, then every token of
// the holder below the close is dropped.
void CoordNode::forced_read(Slot slot, Role& r, NodeId holder, const std::vector<JournalRec>& recs) {
  Force& f = r.forces[holder];
  f.read = true;
  std::map<std::pair<uint64_t, uint32_t>, Version> newest;
  for (const JournalRec& j : recs) {
    if (!j.write) continue;
    Version& v = newest[{j.file, j.group}];
    if (v < j.version) v = j.version;
  }
  for (const auto& [g, v] : newest) {
    const Value* cur = get(r, Key{KeyKind::Group, g.first, g.second});
    if (!cur || cur->version < v) f.to_write[g] = v;
  }
  const uint64_t epoch = r.epoch;
  if (f.to_write.empty()) {
    finish_force(slot, r, holder);
    return;
  }
  f.outstanding = f.to_write.size();
  for (const auto& [g, v] : f.to_write) {
    const std::pair<uint64_t, uint32_t> group = g;
    const Version version = v;
    put_units(slot, epoch, g.first, g.second, v, [this, slot, epoch, holder, group, version](bool ok) {
      Role* r = role_at(slot, epoch);
      if (!r) return;
      if (!ok) {
        drop(slot, true);
        return;
      }
      std::vector<Rec> after;
      const Key gk{KeyKind::Group, group.first, group.second};
      const Value* cur = get(*r, gk);
      if (!cur || cur->version < version) {
        Value nv;
        nv.live = true;
        nv.version = version;
        after.push_back(make(*r, gk, nv));
      }
      auto done = [this, slot, epoch, holder] {
        Role* r = role_at(slot, epoch);
        if (!r) return;
        auto it = r->forces.find(holder);
        if (it == r->forces.end()) return;
        if (--it->second.outstanding == 0) finish_force(slot, *r, holder);
      };
      if (after.empty()) done();
      else journal(slot, Stamp{epoch, 0}, std::move(after), done);
    });
  }
}

void CoordNode::finish_force(Slot slot, Role& r, NodeId holder) {
  const Stamp below = r.forces[holder].below;
  std::vector<Rec> after;
  for (const auto& [k, rec] : r.state)
    if (k.kind == KeyKind::Token && rec.value.live && rec.value.holder == holder &&
        rec.value.stamp < below) {
      after.push_back(make(r, k, Value{}));
      r.revoking.erase({k.a, static_cast<uint32_t>(k.b)});
    }
  r.forces.erase(holder);
  if (!after.empty()) journal(slot, Stamp{r.epoch, 0}, std::move(after), nullptr);
  serve_waiting(slot, r);
}

// ---- initiator side ----

void CoordNode::run_write(uint32_t client, const ClientOp& op) {
  auto done = write_replies_.find(op.id);
  if (done != write_replies_.end()) {
    reply(client, done->second);
    return;
  }
  const std::pair<uint64_t, uint32_t> g{op.ino, op.group};
  for (const WaitingWrite& w : writes_[g])
    if (w.op.id == op.id) return;  // queued already
  auto h = held_.find(g);
  if (h != held_.end() && !h->second.releasing) {
    do_write(client, op, h->second);
    return;
  }
  writes_[g].push_back(WaitingWrite{client, op});
  if (h == held_.end()) ask_token(g);
}

void CoordNode::ask_token(std::pair<uint64_t, uint32_t> g) {
  auto [it, fresh] = token_asked_.try_emplace(g, Asked{next_request_, INT64_MIN / 2});
  if (fresh) ++next_request_;
  if (now_ - it->second.sent < config_.retry_ms) return;
  it->second.sent = now_;
  Msg m;
  m.kind = Msg::Kind::TokenRequest;
  m.to = route(slot_of(g.first));
  m.file = g.first;
  m.group = g.second;
  m.request = it->second.request;
  m.incarnation = incarnation_;
  auto gone = given_up_.find(g);
  if (gone != given_up_.end()) m.stamp = gone->second;  // released: free it if still recorded
  send(m);
}

void CoordNode::do_write(uint32_t client, const ClientOp& op, Held& h) {
  Version v;
  v.stamp = h.stamp;
  v.n = next_version_++;
  v.op = op.id;
  if (h.dirty < v) h.dirty = v;  // before the journal answers: a release waits for it
  ClientReply rep;
  rep.id = op.id;
  rep.status = OpStatus::Ok;
  rep.version = v;
  journal_write(h.slot, h.stamp, op.ino, op.group, v, [this, client, rep] {
    // In the mirror: what a forced revocation reads, if the token is lost from here on.
    write_replies_[rep.id] = rep;
    reply(client, rep);
  });
  pump_held();
}

void CoordNode::on_grant(const Msg& m) {
  const std::pair<uint64_t, uint32_t> g{m.file, m.group};
  auto ask = token_asked_.find(g);
  if (ask == token_asked_.end() || ask->second.request != m.request || held_.count(g)) return;
  auto gone = given_up_.find(g);
  if (gone != given_up_.end() && !(gone->second < m.stamp)) return;  // asked again later
  token_asked_.erase(ask);
  Held& h = held_[g];
  h.stamp = m.stamp;
  h.slot = slot_of(m.file);
  auto q = writes_.find(g);
  if (q == writes_.end()) return;
  std::deque<WaitingWrite> queued = std::move(q->second);
  writes_.erase(q);
  for (const WaitingWrite& w : queued) {
    auto it = held_.find(g);
    if (it == held_.end() || it->second.releasing) {
      writes_[g].push_back(w);
      continue;
    }
    do_write(w.client, w.op, it->second);
  }
}

void CoordNode::on_revoke(const Msg& m) {
  const std::pair<uint64_t, uint32_t> g{m.file, m.group};
  auto h = held_.find(g);
  if (h == held_.end() || !(h->second.stamp == m.stamp)) {
    Msg r = answer(m, Msg::Kind::Released);
    r.ok = false;  // not held here: the coordinator takes the writes from the mirror
    send(r);
    return;
  }
  h->second.releasing = true;
  maybe_release(g);
}

void CoordNode::maybe_release(std::pair<uint64_t, uint32_t> g) {
  auto it = held_.find(g);
  if (it == held_.end() || !it->second.releasing) return;
  Held& h = it->second;
  if (h.recorded < h.dirty || h.flushing) {
    pump_held();
    return;
  }
  Msg r;
  r.kind = Msg::Kind::Released;
  r.to = route(h.slot);
  r.file = g.first;
  r.group = g.second;
  r.stamp = h.stamp;
  r.ok = true;
  send(r);
  given_up_[g] = h.stamp;
  held_.erase(it);
  if (writes_.count(g)) ask_token(g);
}

void CoordNode::pump_held() {
  std::vector<std::pair<uint64_t, uint32_t>> groups;
  for (const auto& [g, h] : held_) groups.push_back(g);
  for (const auto& g : groups) {
    auto it = held_.find(g);
    if (it == held_.end()) continue;
    Held& h = it->second;
    if (h.recording && now_ - h.sent >= config_.retry_ms) {
      h.sent = now_;
      Msg m;
      m.kind = Msg::Kind::Record;
      m.to = route(h.slot);
      m.file = g.first;
      m.group = g.second;
      m.version = h.writing;
      m.stamp = h.stamp;
      send(m);
    }
    if (h.flushing || !(h.recorded < h.dirty)) continue;
    h.flushing = true;
    h.writing = h.dirty;
    const Stamp stamp = h.stamp;
    put_units(h.slot, stamp.epoch, g.first, g.second, h.writing, [this, g, stamp](bool ok) {
      auto it = held_.find(g);
      if (it == held_.end() || !(it->second.stamp == stamp)) return;
      if (!ok) {
        lose_token(g);
        return;
      }
      it->second.recording = true;
      it->second.sent = INT64_MIN / 2;
      pump_held();
    });
  }
  for (auto& [g, q] : writes_)
    if (!q.empty() && !held_.count(g)) ask_token(g);
}

void CoordNode::on_recorded(const Msg& m) {
  const std::pair<uint64_t, uint32_t> g{m.file, m.group};
  auto it = held_.find(g);
  if (it == held_.end() || !(it->second.stamp == m.stamp) || !it->second.recording) return;
  if (!m.ok) {
    lose_token(g);
    return;
  }
  Held& h = it->second;
  if (!(h.writing == m.version)) return;
  h.recorded = h.writing;
  h.flushing = h.recording = false;
  if (h.releasing) maybe_release(g);
  else pump_held();
}

// Not released: what was written under it is the coordinator's to take (forced revocation),
// and until then it may grant the same token again, which is taken (versions stay unique:
// their counter is the node's).
void CoordNode::lose_token(std::pair<uint64_t, uint32_t> g) {
  held_.erase(g);
  if (writes_.count(g)) ask_token(g);
}

}  // namespace nasd::scaleout::coord
