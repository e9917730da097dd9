// Namespace calls of the slots a node coordinates: a change of one slot is one journal record;
// a change spanning slots is a two-phase transaction through the journals of every slot in it
// (COORDINATION.md 3). Every step is a record before it is acted on, so the successor of any
// participant, at any step, finds what to do in the records: an undecided transaction of a
// manager is aborted, a decided one told again, a prepared participant asks its manager.
#include <algorithm>

#include "cluster/scaleout/coordination/coord_node.h"

namespace nasd::scaleout::coord {
namespace {

uint64_t tx_id(Slot manager, uint64_t epoch, uint64_t n) {
  return (uint64_t(manager) << 48) | ((epoch & 0xffffff) << 24) | (n & 0xffffff);
}

}  // namespace

Key CoordNode::lock_key(const Change& c) const {
  switch (c.kind) {
    case Change::Kind::AddEntry:
    case Change::Kind::DelEntry: return Key{KeyKind::Entry, c.dir, 0, c.name};
    default: return Key{KeyKind::Inode, c.ino};
  }
}

bool CoordNode::check(const Role& r, const Change& c, uint64_t tx) const {
  auto locked = [&](const Key& k) {
    auto it = r.locks.find(k);
    return it != r.locks.end() && it->second != tx;
  };
  if (locked(lock_key(c))) return false;
  switch (c.kind) {
    case Change::Kind::AddEntry: {
      const Value* d = get(r, Key{KeyKind::Inode, c.dir});
      if (!d || !d->is_dir || locked(Key{KeyKind::Inode, c.dir})) return false;
      const Value* e = get(r, Key{KeyKind::Entry, c.dir, 0, c.name});
      if (c.replaces == 0) return !e;
      return e && e->child == c.replaces && !e->child_dir;  // still the file it was
    }
    case Change::Kind::DelEntry: {
      const Value* e = get(r, Key{KeyKind::Entry, c.dir, 0, c.name});
      return e && e->child == c.ino;
    }
    case Change::Kind::NewInode:
      return !get(r, Key{KeyKind::Inode, c.ino});
    case Change::Kind::AdjustLinks: {
      const Value* n = get(r, Key{KeyKind::Inode, c.ino});
      return n && !n->is_dir && int64_t(n->nlink) + c.delta >= 0;
    }
    case Change::Kind::SetParent: {
      const Value* n = get(r, Key{KeyKind::Inode, c.ino});
      return n && n->is_dir;
    }
    case Change::Kind::KeepParent: {
      const Value* n = get(r, Key{KeyKind::Inode, c.ino});
      return n && n->is_dir && n->parent == c.dir;
    }
    case Change::Kind::DelDir: {
      const Value* n = get(r, Key{KeyKind::Inode, c.ino});
      if (!n || !n->is_dir) return false;
      // Empty, and no entry of it being added or removed by a prepared transaction.
      for (auto it = r.state.lower_bound(Key{KeyKind::Entry, c.ino, 0, ""});
           it != r.state.end() && it->first.kind == KeyKind::Entry && it->first.a == c.ino; ++it)
        if (it->second.value.live) return false;
      for (auto it = r.locks.lower_bound(Key{KeyKind::Entry, c.ino, 0, ""});
           it != r.locks.end() && it->first.kind == KeyKind::Entry && it->first.a == c.ino; ++it)
        if (it->second != tx) return false;
      return true;
    }
  }
  return false;
}

void CoordNode::lock(Role& r, const Change& c, uint64_t tx) { r.locks[lock_key(c)] = tx; }

void CoordNode::unlock(Role& r, uint64_t tx) {
  for (auto it = r.locks.begin(); it != r.locks.end();)
    it = it->second == tx ? r.locks.erase(it) : std::next(it);
}

void CoordNode::apply(Role& r, const Change& c, std::vector<Rec>* out) {
  auto put = [&](Key k, Value v) {
    Rec rec = make(r, std::move(k), std::move(v));
    r.state[rec.key] = rec;  // seen by the next change of the same call; stamped by journal()
    out->push_back(rec);
  };
  switch (c.kind) {
    case Change::Kind::AddEntry: {
      Value v;
      v.live = true;
      v.child = c.ino;
      v.child_dir = c.is_dir;
      put(Key{KeyKind::Entry, c.dir, 0, c.name}, v);
      return;
    }
    case Change::Kind::DelEntry:
      put(Key{KeyKind::Entry, c.dir, 0, c.name}, Value{});
      return;
    case Change::Kind::NewInode: {
      Value v;
      v.live = true;
      v.is_dir = c.is_dir;
      v.nlink = 1;
      v.parent = c.dir;
      put(Key{KeyKind::Inode, c.ino}, v);
      return;
    }
    case Change::Kind::AdjustLinks: {
      const Value* n = get(r, Key{KeyKind::Inode, c.ino});
      Value v = n ? *n : Value{};
      v.nlink = static_cast<uint32_t>(int64_t(v.nlink) + c.delta);
      if (v.nlink == 0) {
        v = Value{};
        // The file's group records go with it (its units are then orphans for the sweep).
        std::vector<Key> groups;
        for (auto it = r.state.lower_bound(Key{KeyKind::Group, c.ino});
             it != r.state.end() && it->first.kind == KeyKind::Group && it->first.a == c.ino; ++it)
          if (it->second.value.live) groups.push_back(it->first);
        for (const Key& g : groups) put(g, Value{});
      }
      put(Key{KeyKind::Inode, c.ino}, v);
      return;
    }
    case Change::Kind::DelDir:
      put(Key{KeyKind::Inode, c.ino}, Value{});
      return;
    case Change::Kind::SetParent: {
      const Value* n = get(r, Key{KeyKind::Inode, c.ino});
      Value v = n ? *n : Value{};
      v.parent = c.dir;
      put(Key{KeyKind::Inode, c.ino}, v);
      return;
    }
    case Change::Kind::KeepParent:
      return;  // its lock was the point
  }
}

// The parts of `op` by slot (this slot's first). False with *status when it cannot run now.
bool CoordNode::plan(Role& r, Slot slot, const ClientOp& op, uint64_t target,
                     const std::vector<std::pair<uint64_t, uint64_t>>& chain,
                     std::vector<Part>* parts, uint64_t* made, OpStatus* status) {
  std::map<Slot, Part> by;
  auto add = [&](Slot s, Change c) {
    by[s].slot = s;
    by[s].changes.push_back(std::move(c));
  };
  Value head;
  if (const Value* h = get(r, Key{KeyKind::Head})) head = *h;
  const Value* entry = get(r, Key{KeyKind::Entry, op.dir, 0, op.name});
  // A name a prepared transaction holds is about to change (a committed RENAME into this
  // directory, say, whose manager has answered already): wait for the outcome.
  *status = r.locks.count(Key{KeyKind::Entry, op.dir, 0, op.name}) ? OpStatus::Retry : OpStatus::Error;
  switch (op.kind) {
    case OpKind::Create:
    case OpKind::Mkdir: {
      // Counters start at 2: make_ino(0, 0, 1) is the root.
      const uint64_t n = std::max<uint64_t>(head.counter, 1) + 1;
      const bool dir = op.kind == OpKind::Mkdir;
      const Slot at = dir ? directory_slot(op.dir, op.name, n, config_.slots) : slot;
      *made = make_ino(at, slot, n);
      add(slot, Change{Change::Kind::AddEntry, op.dir, op.name, *made, dir, 0});
      add(at, Change{Change::Kind::NewInode, op.dir, "", *made, dir, 0});
      break;
    }
    case OpKind::Remove:
    case OpKind::Rmdir: {
      if (!entry || entry->child_dir != (op.kind == OpKind::Rmdir)) return false;
      add(slot, Change{Change::Kind::DelEntry, op.dir, op.name, entry->child, entry->child_dir, 0});
      if (op.kind == OpKind::Remove)
        add(slot_of(entry->child), Change{Change::Kind::AdjustLinks, 0, "", entry->child, false, -1});
      else
        add(slot_of(entry->child), Change{Change::Kind::DelDir, 0, "", entry->child, true, 0});
      break;
    }
    case OpKind::Link:
      add(slot, Change{Change::Kind::AddEntry, op.dir, op.name, op.ino, false, 0});
      add(slot_of(op.ino), Change{Change::Kind::AdjustLinks, 0, "", op.ino, false, +1});
      break;
    case OpKind::Rename:
      if (!entry) return false;
      // Onto an existing name: a file only, by a file; the file it named loses that name.
      if (target != 0 && (entry->child_dir || target == entry->child)) return false;
      add(slot, Change{Change::Kind::DelEntry, op.dir, op.name, entry->child, entry->child_dir, 0});
      add(slot_of(op.dir2), Change{Change::Kind::AddEntry, op.dir2, op.name2, entry->child,
                                   entry->child_dir, 0, target});
      if (target != 0)
        add(slot_of(target), Change{Change::Kind::AdjustLinks, 0, "", target, false, -1});
      if (entry->child_dir && op.dir2 != op.dir) {
        // A directory into another one: it gets its new parent, and every ancestor of the
        // target, as walked, must still be where it was and stays so until the outcome (their
        // inodes locked): no concurrent RENAME can then make the walk's answer, no cycle, false.
        add(slot_of(entry->child),
            Change{Change::Kind::SetParent, op.dir2, "", entry->child, true, 0});
        for (const auto& [x, parent] : chain)
          add(slot_of(x), Change{Change::Kind::KeepParent, parent, "", x, true, 0});
      }
      break;
    default:
      return false;
  }
  parts->clear();
  parts->push_back(by[slot]);
  for (auto& [s, p] : by)
    if (s != slot) parts->push_back(p);
  *status = OpStatus::Ok;
  return true;
}

void CoordNode::run_op(Slot slot, Role& r, uint32_t client, const ClientOp& op) {
  ClientReply rep;
  rep.id = op.id;
  if (r.in_flight_ops.count(op.id)) return;  // answered when it finishes
  if (const Value* done = get(r, Key{KeyKind::Done, op.id})) {  // a retransmission
    if (unsettled(r, Key{KeyKind::Done, op.id})) return;
    rep.status = static_cast<OpStatus>(done->status);
    rep.ino = done->result;
    reply(client, rep);
    return;
  }
  if (op.kind == OpKind::Read) {
    const Value* file = get(r, Key{KeyKind::Inode, op.ino});
    if (!file || file->is_dir) {
      rep.status = OpStatus::Error;  // NFS3ERR_STALE
      reply(client, rep);
      return;
    }
    if (group_free(slot, r, op.ino, op.group)) {
      const Value* g = get(r, Key{KeyKind::Group, op.ino, op.group});
      rep.status = OpStatus::Ok;
      if (g) rep.version = g->version;
      reply(client, rep);
    } else {
      r.waiting.push_back(Pending{client, op, 0});
      r.in_flight_ops.insert(op.id);
    }
    return;
  }
  uint64_t target = 0;
  if (op.kind == OpKind::Rename && !rename_target(slot, r, op, &target)) {
    rep.status = OpStatus::Retry;  // asked; the retransmission finds the answer
    reply(client, rep);
    return;
  }
  std::vector<std::pair<uint64_t, uint64_t>> chain;
  if (op.kind == OpKind::Rename && op.dir2 != op.dir) {
    const Value* e = get(r, Key{KeyKind::Entry, op.dir, 0, op.name});
    bool cycle = false;
    if (e && e->child_dir && !ancestors(slot, r, op, e->child, &chain, &cycle)) {
      rep.status = cycle ? OpStatus::Error : OpStatus::Retry;  // NFS3ERR_INVAL: under itself
      reply(client, rep);
      return;
    }
  }
  std::vector<Part> parts;
  uint64_t made = 0;
  OpStatus status;
  if (!plan(r, slot, op, target, chain, &parts, &made, &status)) {
    rep.status = status;
    reply(client, rep);
    return;
  }
  const uint64_t tx = parts.size() > 1 ? tx_id(slot, r.epoch, r.next_tx++) : 0;
  for (const Change& c : parts[0].changes)
    if (!check(r, c, tx)) {
      rep.status = OpStatus::Retry;  // locked by a transaction, or not possible now
      reply(client, rep);
      return;
    }
  std::vector<Rec> after;
  Value head;
  if (const Value* h = get(r, Key{KeyKind::Head})) head = *h;
  head.live = true;
  head.journal = config_.self;
  if (made) head.counter = std::max<uint64_t>(head.counter, 1) + 1;
  after.push_back(make(r, Key{KeyKind::Head}, head));
  r.in_flight_ops.insert(op.id);
  const uint64_t epoch = r.epoch;
  if (parts.size() == 1) {
    for (const Change& c : parts[0].changes) apply(r, c, &after);
    Value done;
    done.live = true;
    done.op = op.id;
    done.result = made;
    after.push_back(make(r, Key{KeyKind::Done, op.id}, done));
    journal(slot, Stamp{epoch, 0}, std::move(after), [this, slot, epoch, client, rep, made] {
      if (Role* r = role_at(slot, epoch)) r->in_flight_ops.erase(rep.id);
      // Answered only under a trusted lease; a retransmission finds the Done record.
      Role* r = serving_role(slot);
      if (!r || r->epoch != epoch) return;
      ClientReply ok = rep;
      ok.status = OpStatus::Ok;
      ok.ino = made;
      reply(client, ok);
    });
    return;
  }
  for (const Change& c : parts[0].changes) lock(r, c, tx);
  Value t;
  t.live = true;
  t.tx = TxState::Begun;
  t.manager = slot;
  t.parts = parts;
  t.op = op.id;
  t.result = made;
  after.push_back(make(r, Key{KeyKind::Tx, tx}, t));
  Tx& mt = r.txs[tx];
  mt.op = op;
  mt.client = client;
  mt.started = now_;
  for (const Part& p : parts) mt.parts[p.slot] = p;
  mt.sent = INT64_MIN / 2;  // Prepare goes out once the Begin is durable
  mt.begun = false;
  journal(slot, Stamp{epoch, 0}, std::move(after), [this, slot, epoch, tx] {
    Role* r = role_at(slot, epoch);
    if (!r) return;
    auto it = r->txs.find(tx);
    if (it == r->txs.end()) return;
    it->second.begun = true;
    if (serving_role(slot)) pump_txs(slot, *r);
  });
}

// What the target name of a RENAME holds now: read here when its directory is in this slot,
// else asked of that slot's coordinator (false until it answered). A locked name is not an
// answer (false too). The answer may be stale by the time the transaction prepares: the
// prepare checks the name still holds it (Change::replaces), and a No makes the client retry.
bool CoordNode::rename_target(Slot slot, Role& r, const ClientOp& op, uint64_t* target) {
  const Key k{KeyKind::Entry, op.dir2, 0, op.name2};
  if (slot_of(op.dir2) == slot) {
    if (r.locks.count(k)) return false;
    const Value* e = get(r, k);
    *target = e ? e->child : 0;
    return true;
  }
  auto it = r.targets.find(op.id);
  if (it != r.targets.end()) {
    *target = it->second;
    r.targets.erase(it);
    return true;
  }
  Msg m;
  m.kind = Msg::Kind::Lookup;
  m.to = route(slot_of(op.dir2));
  m.slot = slot_of(op.dir2);
  m.manager = slot;
  m.request = op.id;
  m.file = op.dir2;
  m.name = op.name2;
  send(m);
  return false;
}

// Walks up from the target directory, one parent at a time (asked of each directory's slot
// when it is not this one, the answers kept between the client's retransmissions).
bool CoordNode::ancestors(Slot slot, Role& r, const ClientOp& op, uint64_t moved,
                          std::vector<std::pair<uint64_t, uint64_t>>* chain, bool* cycle) {
  constexpr size_t kMaxDepth = 256;
  auto& walk = r.walks[op.id];
  for (;;) {
    const uint64_t at = walk.empty() ? op.dir2 : walk.back().second;
    if (at == moved) {
      *cycle = true;
      r.walks.erase(op.id);
      return false;
    }
    if (at == kRootIno || walk.size() >= kMaxDepth) {
      *chain = walk;
      r.walks.erase(op.id);
      return true;
    }
    if (slot_of(at) != slot) break;
    const Key k{KeyKind::Inode, at};
    const Value* d = get(r, k);
    if (!d || r.locks.count(k)) return false;  // gone (the prepare says No) or changing
    walk.push_back({at, d->parent});
  }
  const uint64_t at = walk.empty() ? op.dir2 : walk.back().second;
  Msg m;
  m.kind = Msg::Kind::Lookup;  // with no name: the parent of a directory
  m.to = route(slot_of(at));
  m.slot = slot_of(at);
  m.manager = slot;
  m.request = op.id;
  m.file = at;
  send(m);
  return false;
}

void CoordNode::on_lookup(const Msg& m) {
  Role* r = serving_role(m.slot);
  if (!r) return;
  if (m.name.empty()) {
    const Key k{KeyKind::Inode, m.file};
    const Value* d = get(*r, k);
    if (!d || !d->is_dir || r->locks.count(k) || unsettled(*r, k)) return;
    Msg a = answer(m, Msg::Kind::LookedUp);
    a.ok = true;
    a.version.n = d->parent;  // the parent, in the answer's spare field
    send(a);
    return;
  }
  const Key k{KeyKind::Entry, m.file, 0, m.name};
  if (r->locks.count(k) || unsettled(*r, k)) return;  // changing: asked again
  Msg a = answer(m, Msg::Kind::LookedUp);
  const Value* e = get(*r, k);
  a.ok = e && !e->child_dir;
  a.file = e ? e->child : 0;
  send(a);
}

void CoordNode::on_looked_up(const Msg& m) {
  Role* r = serving_role(m.manager);
  if (!r) return;
  if (!m.name.empty()) {
    r->targets[m.request] = m.file;
    return;
  }
  auto w = r->walks.find(m.request);
  if (w == r->walks.end()) return;
  const uint64_t at = w->second.empty() ? 0 : w->second.back().second;
  if (at != 0 && at != m.file) return;  // an answer for an earlier step
  w->second.push_back({m.file, m.version.n});
}

// Resends what a transaction waits for; gives up an undecided one that waits too long.
void CoordNode::pump_txs(Slot slot, Role& r) {
  std::vector<uint64_t> ids;
  for (const auto& [id, t] : r.txs) ids.push_back(id);
  for (uint64_t id : ids) {
    auto it = r.txs.find(id);
    if (it == r.txs.end()) continue;
    Tx& t = it->second;
    if (!t.decided && t.begun && now_ - t.started > 6 * config_.revoke_ms) {
      finish_tx(slot, r, id, false);
      continue;
    }
    if (!t.decided && !t.begun) continue;
    if (now_ - t.sent < config_.retry_ms) continue;
    t.sent = now_;
    for (const auto& [s, p] : t.parts) {
      if (s == slot) continue;
      Msg m;
      m.to = route(s);
      m.tx = id;
      m.slot = s;
      m.manager = slot;
      if (!t.decided) {
        if (t.yes.count(s)) continue;
        m.kind = Msg::Kind::Prepare;
        m.part = p;
      } else {
        // Told only once the decision is durable: a successor could otherwise decide again.
        if (t.done.count(s) || unsettled(r, Key{KeyKind::Tx, id})) continue;
        m.kind = Msg::Kind::Decide;
        m.commit = t.commit;
      }
      send(m);
    }
  }
  for (auto& [id, at] : r.queries) {
    if (now_ - at < config_.retry_ms) continue;
    at = now_;
    const Value* v = get(r, Key{KeyKind::Tx, id});
    Msg m;
    m.kind = Msg::Kind::Query;
    m.tx = id;
    m.slot = slot;
    m.manager = v ? v->manager : 0;
    m.to = route(m.manager);
    send(m);
  }
}

// The manager's decision: one record (with its own part applied when it commits); the client
// is answered once it is durable, and every participant is told until it answers.
void CoordNode::finish_tx(Slot slot, Role& r, uint64_t tx, bool commit) {
  Tx& t = r.txs[tx];
  if (t.decided) return;
  t.decided = true;
  t.commit = commit;
  t.sent = INT64_MIN / 2;
  const Value* v = get(r, Key{KeyKind::Tx, tx});
  if (!v) return;
  Value nv = *v;
  nv.tx = commit ? TxState::Committed : TxState::Aborted;
  std::vector<Rec> after;
  unlock(r, tx);
  if (commit) {
    for (const Change& c : t.parts[slot].changes) apply(r, c, &after);
    Value done;
    done.live = true;
    done.op = t.op.id;
    done.result = nv.result;
    after.push_back(make(r, Key{KeyKind::Done, t.op.id}, done));
  }
  after.push_back(make(r, Key{KeyKind::Tx, tx}, nv));
  const uint64_t epoch = r.epoch;
  const uint32_t client = t.client;
  ClientReply rep;
  rep.id = t.op.id;
  rep.status = commit ? OpStatus::Ok : OpStatus::Retry;
  rep.ino = nv.result;
  journal(slot, Stamp{epoch, 0}, std::move(after), [this, slot, epoch, client, rep] {
    if (Role* r = role_at(slot, epoch)) r->in_flight_ops.erase(rep.id);
    Role* r = serving_role(slot);
    if (!r || r->epoch != epoch) return;
    reply(client, rep);
  });
}

void CoordNode::on_prepare(const Msg& m) {
  Role* r = serving_role(m.slot);
  if (!r) return;
  Msg vote = answer(m, Msg::Kind::Vote);
  if (unsettled(*r, Key{KeyKind::Tx, m.tx})) return;  // answered once its record is durable
  if (const Value* v = get(*r, Key{KeyKind::Tx, m.tx})) {
    if (v->tx == TxState::Aborted) return;  // it answered No: the manager decided already
    vote.ok = true;                          // prepared (or committed): Yes again
    send(vote);
    return;
  }
  for (const Change& c : m.part.changes)
    if (!check(*r, c, m.tx)) {
      vote.ok = false;  // presumed abort: no record needed for a No
      send(vote);
      return;
    }
  for (const Change& c : m.part.changes) lock(*r, c, m.tx);
  // Asks the manager from time to time until the outcome arrives: a late copy of a Prepare
  // can prepare a transaction its manager has already aborted and forgotten.
  r->queries[m.tx] = now_;
  Value t;
  t.live = true;
  t.tx = TxState::Prepared;
  t.manager = m.manager;
  t.parts = {m.part};
  const uint64_t epoch = r->epoch;
  const Slot slot = m.slot;
  journal(slot, Stamp{epoch, 0}, {make(*r, Key{KeyKind::Tx, m.tx}, t)},
          [this, slot, epoch, vote]() mutable {
            Role* r = serving_role(slot);
            if (!r || r->epoch != epoch) return;
            vote.ok = true;
            send(vote);
          });
}

void CoordNode::on_vote(const Msg& m) {
  Role* r = serving_role(m.manager);
  if (!r) return;
  auto it = r->txs.find(m.tx);
  if (it == r->txs.end() || it->second.decided || !it->second.parts.count(m.slot)) return;
  if (!m.ok) {
    finish_tx(m.manager, *r, m.tx, false);
    return;
  }
  Tx& t = it->second;
  t.yes.insert(m.slot);
  if (t.yes.size() + 1 == t.parts.size()) finish_tx(m.manager, *r, m.tx, true);
}

void CoordNode::on_decide(const Msg& m) {
  Role* r = serving_role(m.slot);
  if (!r) return;
  Msg done = answer(m, Msg::Kind::Decided);
  if (unsettled(*r, Key{KeyKind::Tx, m.tx})) return;
  r->queries.erase(m.tx);
  const Value* v = get(*r, Key{KeyKind::Tx, m.tx});
  if (!v || v->tx != TxState::Prepared) {
    // Already decided here, or never prepared (then the outcome can only be Abort).
    if (v || !m.commit) send(done);
    return;
  }
  Value nv = *v;
  nv.tx = m.commit ? TxState::Committed : TxState::Aborted;
  std::vector<Rec> after;
  unlock(*r, m.tx);
  if (m.commit)
    for (const Part& p : v->parts)
      for (const Change& c : p.changes) apply(*r, c, &after);
  after.push_back(make(*r, Key{KeyKind::Tx, m.tx}, nv));
  const uint64_t epoch = r->epoch;
  const Slot slot = m.slot;
  journal(slot, Stamp{epoch, 0}, std::move(after), [this, slot, epoch, done] {
    Role* r = serving_role(slot);
    if (!r || r->epoch != epoch) return;
    send(done);
  });
}

void CoordNode::on_decided(const Msg& m) {
  Role* r = serving_role(m.manager);
  if (!r) return;
  auto it = r->txs.find(m.tx);
  if (it == r->txs.end() || !it->second.decided) return;
  Tx& t = it->second;
  t.done.insert(m.slot);
  if (t.done.size() + 1 < t.parts.size() || t.ended) return;
  t.ended = true;
  const uint64_t epoch = r->epoch;
  const Slot slot = m.manager;
  const uint64_t tx = m.tx;
  // Every participant knows the outcome: the transaction is forgotten (a tombstone).
  journal(slot, Stamp{epoch, 0}, {make(*r, Key{KeyKind::Tx, tx}, Value{})}, [this, slot, epoch, tx] {
    if (Role* r = role_at(slot, epoch)) r->txs.erase(tx);
  });
}

void CoordNode::on_query(const Msg& m) {
  Role* r = serving_role(m.manager);
  if (!r) return;
  if (unsettled(*r, Key{KeyKind::Tx, m.tx})) return;
  const Value* v = get(*r, Key{KeyKind::Tx, m.tx});
  if (v && v->tx == TxState::Begun) return;  // still deciding; the decision will be sent
  Msg d = answer(m, Msg::Kind::Decide);
  // Presumed abort: no record here means it never committed.
  d.commit = v && v->tx == TxState::Committed;
  send(d);
}

}  // namespace nasd::scaleout::coord
