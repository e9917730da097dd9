// TEST FIXTURE ONLY: a deterministic simulation of the scale-out coordination protocol
// (cluster/scaleout/COORDINATION.md, coordination/coord_node.h), FoundationDB style like
// tests/cluster/cluster_simulation.h: four primaries (CoordNode), their storage (the fenced
// record and unit stores, and each node's journal mirror at its cover), a lease authority per
// slot, and clients issuing CREATE, MKDIR, REMOVE, RMDIR, LINK, RENAME, WRITE and READ through
// random nodes, each client in a tree of its own (or, with Faults::shared_tree, all of them
// making and moving the directories of one tree) and retransmitting until answered. One seeded
// generator drives everything: kills (volatile state lost; journals, mirrors and stores kept)
// and restarts, pauses (SIGSTOP) longer than the lease, one-way partitions between nodes, and
// lost, duplicated and reordered messages between nodes (a client's own link loses calls, but
// neither duplicates nor delays them: that is the reply cache's business, not this protocol's).
//
// After every event: at most one node serves a slot, under the epoch the authority granted it
// and an unexpired lease, and no two nodes ever serve one slot under one epoch; no store
// accepts a put of an older epoch than it has accepted for that slot (checked against the
// simulation's own record, not the store's word); every READ answers the version of the last
// acknowledged WRITE of its group (coherence), and that version's units are on enough nodes to
// decode. After the faults stop and every call is answered (settle), and again after every
// node is killed and restarted at once (recovery from journals, mirrors and stores alone):
// every slot is served; the namespace is a tree (every entry names a live inode of its type, a
// file's link count is the entries naming it, every directory is named once, by its parent,
// and every inode is reachable from the root; no transaction is left prepared or undecided);
// it is exactly what the clients were acknowledged; every written group reads back as its last
// acknowledged WRITE.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cluster/scaleout/coordination/coord_node.h"

namespace nasd::scaleout::coord::testing {


constexpr int kNodes = 4;
constexpr int kClients = 4;
constexpr uint32_t kSlots = 16;
constexpr uint32_t kGroups = 3;

struct Faults {
  double crash = 0.0004;         // per node and 10 ms
  double restart = 0.01;
  double pause = 0.0004;
  int64_t max_pause_ms = 6000;   // the lease is 2000
  double link_toggle = 0.0008;   // per ordered pair and 10 ms
  double loss = 0.03;
  double duplicate = 0.03;
  int64_t max_delay_ms = 30;
  int64_t max_authority_ms = 30;
  bool fencing = true;           // false: the stores admit every epoch (the checks must notice)
  // Every client makes and moves the directories of one shared tree, concurrently: there is no
  // reference of what it holds then, the tree is checked (no cycle, nothing cut off).
  bool shared_tree = false;
};

struct Stats {
  int crashes = 0, pauses = 0, partitions = 0, takeovers = 0;
  int64_t max_takeover_ms = 0;
  std::map<OpKind, int> acked;
  int cross_slot = 0;  // namespace calls acknowledged that spanned two slots
  int replacing_renames = 0;  // RENAMEs onto an existing file's name
  int dir_moves = 0;          // RENAMEs of a directory into another directory
  int cycles_refused = 0;     // ... refused because it would be moved under itself
};

class Simulation {
 public:
  Simulation(uint64_t seed, Faults faults) : rng_(seed), faults_(faults) {
    for (int i = 0; i < kNodes; ++i) {
      config_.nodes.push_back(static_cast<NodeId>(i + 1));
    }
    config_.slots = kSlots;
    nodes_.resize(kNodes);
    for (int i = 0; i < kNodes; ++i) {
      nodes_[i].storage.store.set_fencing(faults_.fencing);
      start(i);
    }
    link_ok_.assign(kNodes, std::vector<bool>(kNodes, true));
    clients_.resize(kClients);
    for (int c = 0; c < kClients; ++c) {
      clients_[c].id = static_cast<uint32_t>(c);
      clients_[c].dirs.insert(kRootIno);
      clients_[c].next_at = rand_ms(500);
    }
  }

  // Runs `ms` of simulated time (with faults or without). "" or the first violation.
  std::string run(int64_t ms, bool faults) {
    const int64_t end = now_ + ms;
    while (violation_.empty() && now_ < end) {
      step(faults);
    }
    return violation_;
  }

  void heal() {
    for (int i = 0; i < kNodes; ++i) {
      nodes_[i].paused_until = std::min(nodes_[i].paused_until, now_);
      if (!nodes_[i].up) start(i);
      for (int j = 0; j < kNodes; ++j) link_ok_[i][j] = true;
    }
  }

  // Every node killed at once and started again: what survives is the storage only.
  void restart_all() {
    for (int i = 0; i < kNodes; ++i) kill(i);
    for (int i = 0; i < kNodes; ++i) start(i);
    log("every node restarted");
  }

  // Without faults: clients stop issuing new calls, finish what they have, then read back every
  // group they wrote. "" once all of that is answered and every slot is served.
  std::string settle(int64_t max_ms) {
    for (Client& c : clients_) {
      c.final_reads.clear();
      c.stopping = true;
      c.reads_due = true;  // listed once the call in flight is answered
    }
    const int64_t end = now_ + max_ms;
    while (violation_.empty() && now_ < end) {
      step(false);
      bool idle = true;
      for (const Client& c : clients_) idle = idle && !c.busy && !c.reads_due && c.final_reads.empty();
      if (idle && every_slot_served().empty() && undecided().empty()) return "";
    }
    if (!violation_.empty()) return violation_;
    std::string why = every_slot_served() + undecided();
    for (const Client& c : clients_)
      if (c.busy) why += " client " + std::to_string(c.id) + " still waits for " + describe(c.op) +
                         " (at n" + std::to_string(c.target + 1) + ")";
    if (every_slot_served().empty()) {
      const std::string tree = check_namespace();
      if (!tree.empty()) why = " the namespace: " + tree + ";" + why;
    }
    for (const Node& n : nodes_)
      if (n.up) why += "\n  " + n.member->describe();
    return "did not settle:" + why;
  }

  // The namespace, as the nodes serving the slots hold it, against the clients' references.
  std::string check_namespace() const {
    std::map<uint64_t, Value> inodes;
    std::map<std::pair<uint64_t, std::string>, Value> entries;
    for (Slot s = 0; s < kSlots; ++s) {
      const Records* recs = nullptr;
      for (const Node& n : nodes_)
        if (n.up && n.member->serving(s, now_)) recs = n.member->slot_state(s);
      if (!recs) return "slot " + std::to_string(s) + " not served";
      for (const auto& [k, r] : *recs) {
        if (!r.value.live) continue;
        if (k.kind == KeyKind::Inode) {
          if (slot_of(k.a) != s) return "inode in the wrong slot";
          inodes[k.a] = r.value;
        } else if (k.kind == KeyKind::Entry) {
          if (slot_of(k.a) != s) return "entry in the wrong slot";
          entries[{k.a, k.name}] = r.value;
        } else if (k.kind == KeyKind::Tx &&
                   (r.value.tx == TxState::Begun || r.value.tx == TxState::Prepared)) {
          return "transaction " + std::to_string(k.a) + " left in slot " + std::to_string(s) +
                 " (state " + std::to_string(int(r.value.tx)) + ")";
        }
      }
    }
    if (!inodes.count(kRootIno) || !inodes[kRootIno].is_dir) return "no root";
    std::map<uint64_t, int> names;
    std::map<uint64_t, std::vector<uint64_t>> children;
    for (const auto& [k, e] : entries) {
      auto it = inodes.find(e.child);
      if (it == inodes.end()) return "dangling entry " + k.second + " -> " + std::to_string(e.child);
      if (it->second.is_dir != e.child_dir) return "entry " + k.second + " of the wrong type";
      auto d = inodes.find(k.first);
      if (d == inodes.end() || !d->second.is_dir) return "entry " + k.second + " in a non-directory";
      if (e.child_dir && it->second.parent != k.first) return "directory " + k.second + " with a wrong parent";
      ++names[e.child];
      children[k.first].push_back(e.child);
    }
    for (const auto& [ino, v] : inodes) {
      if (ino == kRootIno) continue;
      if (v.is_dir && names[ino] != 1) return "directory " + std::to_string(ino) + " named " + std::to_string(names[ino]) + " times";
      if (!v.is_dir && int(v.nlink) != names[ino]) return "file " + std::to_string(ino) + " nlink " + std::to_string(v.nlink) + " but " + std::to_string(names[ino]) + " names";
    }
    std::set<uint64_t> seen{kRootIno};
    std::deque<uint64_t> todo{kRootIno};
    while (!todo.empty()) {
      const uint64_t d = todo.front();
      todo.pop_front();
      for (uint64_t c : children[d]) {
        if (inodes[c].is_dir && seen.count(c)) return "cycle through " + std::to_string(c);
        if (seen.insert(c).second && inodes[c].is_dir) todo.push_back(c);
      }
    }
    if (seen.size() != inodes.size()) return std::to_string(inodes.size() - seen.size()) + " orphan inodes";
    if (faults_.shared_tree) return "";
    // Exactly what the clients were acknowledged.
    std::map<std::pair<uint64_t, std::string>, std::pair<uint64_t, bool>> expected;
    for (const Client& c : clients_)
      for (const auto& [k, v] : c.entries) expected[k] = v;
    for (const auto& [k, e] : entries) {
      auto it = expected.find(k);
      if (it == expected.end()) return "entry " + k.second + " that no acknowledged call made";
      if (it->second.first != e.child) return "entry " + k.second + " names another inode";
    }
    if (entries.size() != expected.size()) {
      for (const auto& [k, v] : expected)
        if (!entries.count(k)) return "acknowledged entry " + k.second + " lost";
    }
    return "";
  }

  // Kills `victim` for good on a quiet cluster and waits until every slot it served is served
  // by a survivor. Returns the longest time from the kill to that (ms), or -1 with *why when a
  // slot of another node stopped being served meanwhile, or the victim's were not taken.
  int64_t time_takeover(int victim, std::string* why) {
    std::set<Slot> moved;
    for (Slot s = 0; s < kSlots; ++s)
      if (nodes_[victim].member->serving(s, now_)) moved.insert(s);
    kill(victim);
    const int64_t killed_at = now_;
    log("n" + std::to_string(victim + 1) + " killed for good");
    std::map<Slot, int64_t> taken;
    while (now_ - killed_at < 10000 && taken.size() < moved.size()) {
      step(false);
      if (!violation_.empty()) {
        *why = violation_;
        return -1;
      }
      for (Slot s = 0; s < kSlots; ++s) {
        bool served = false;
        for (int i = 0; i < kNodes; ++i) served = served || (nodes_[i].up && nodes_[i].member->serving(s, now_));
        if (moved.count(s)) {
          if (served && !taken.count(s)) taken[s] = now_ - killed_at;
        } else if (!served) {
          *why = "slot " + std::to_string(s) + " of a survivor unserved at " + std::to_string(now_);
          return -1;
        }
      }
    }
    if (taken.size() < moved.size()) {
      *why = "slots of n" + std::to_string(victim + 1) + " not taken over in 10 s";
      return -1;
    }
    int64_t longest = 0;
    for (const auto& [s, ms] : taken) longest = std::max(longest, ms);
    return longest;
  }

  int64_t lease_ms() const { return config_.lease_ms; }
  const Stats& stats() const { return stats_; }
  std::string trace() const {
    std::string out;
    for (const auto& l : trace_) out += l + "\n";
    return out;
  }

 private:
  struct Node {
    std::unique_ptr<CoordNode> member;
    NodeStorage storage;  // survives kills
    bool up = false;
    uint64_t incarnation = 0;
    int64_t paused_until = 0;
    int64_t next_tick = 0;
  };
  struct Lease {
    int holder = -1;
    uint64_t incarnation = 0;
    uint64_t epoch = 0;
    int64_t expires = 0;
  };
  struct FileRef {
    std::map<uint32_t, uint64_t> written;  // group -> last acknowledged WRITE (op id)
  };
  struct Client {
    uint32_t id = 0;
    std::set<uint64_t> dirs;                                                  // its own + root
    std::map<std::pair<uint64_t, std::string>, std::pair<uint64_t, bool>> entries;  // -> ino, dir
    std::map<uint64_t, FileRef> files;
    uint64_t counter = 0;
    bool busy = false;
    ClientOp op;
    int target = 0;        // the node it sends to
    int64_t sent = 0;
    int64_t next_at = 0;
    bool stopping = false;
    bool reads_due = false;
    std::vector<std::pair<uint64_t, uint32_t>> final_reads;
  };
  struct Event {
    int64_t at;
    uint64_t seq;
    std::function<void()> fn;
    bool operator>(const Event& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  int64_t rand_ms(int64_t max) { return max <= 0 ? 0 : static_cast<int64_t>(rng_() % (max + 1)); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  void schedule(int64_t at, std::function<void()> fn) { events_.push(Event{at, seq_++, std::move(fn)}); }
  void log(const std::string& line) {
    trace_.push_back("t=" + std::to_string(now_) + " " + line);
    if (trace_.size() > 400) trace_.pop_front();
  }
  static std::string describe(const ClientOp& op) {
    return std::string(op_kind_name(op.kind)) + " #" + std::to_string(op.id) + " " + op.name;
  }

  void start(int i) {
    Node& n = nodes_[i];
    n.up = true;
    n.incarnation = ++incarnations_;
    n.paused_until = 0;
    CoordConfig c = config_;
    c.self = static_cast<NodeId>(i + 1);
    n.member = std::make_unique<CoordNode>(c, n.incarnation, now_);
    n.next_tick = now_;
  }

  void kill(int i) {
    Node& n = nodes_[i];
    if (!n.up) return;
    collect_takeovers(i);
    n.up = false;
    n.member.reset();
  }

  void collect_takeovers(int i) {
    for (int64_t ms : nodes_[i].member->takeover_ms()) {
      ++stats_.takeovers;
      stats_.max_takeover_ms = std::max(stats_.max_takeover_ms, ms);
    }
  }

  bool runs(int i) const { return nodes_[i].up && nodes_[i].paused_until <= now_; }

  // Runs fn on node i (incarnation inc) as soon as it is not paused.
  void on_node(int i, uint64_t inc, std::function<void()> fn) {
    if (!nodes_[i].up || nodes_[i].incarnation != inc) return;
    if (nodes_[i].paused_until > now_) {
      schedule(nodes_[i].paused_until, [this, i, inc, fn] { on_node(i, inc, fn); });
      return;
    }
    fn();
    flush(i);
  }

  void step(bool faults) {
    const int64_t next = now_ + 10;
    while (!events_.empty() && events_.top().at <= next && violation_.empty()) {
      Event e = events_.top();
      events_.pop();
      now_ = std::max(now_, e.at);
      e.fn();
      check();
    }
    now_ = next;
    if (faults) inject();
    for (int i = 0; i < kNodes; ++i)
      if (runs(i)) {
        nodes_[i].member->tick(now_);
        flush(i);
      }
    for (Client& c : clients_) drive(c);
    check();
  }

  void inject() {
    for (int i = 0; i < kNodes; ++i) {
      Node& n = nodes_[i];
      if (!n.up) {
        if (chance(faults_.restart)) {
          start(i);
          log("n" + std::to_string(i + 1) + " restarted");
        }
        continue;
      }
      if (chance(faults_.crash)) {
        kill(i);
        ++stats_.crashes;
        log("n" + std::to_string(i + 1) + " killed");
        continue;
      }
      if (n.paused_until <= now_ && chance(faults_.pause)) {
        n.paused_until = now_ + 1 + rand_ms(faults_.max_pause_ms);
        ++stats_.pauses;
        log("n" + std::to_string(i + 1) + " paused until " + std::to_string(n.paused_until));
      }
    }
    for (int a = 0; a < kNodes; ++a)
      for (int b = 0; b < kNodes; ++b)
        if (a != b && chance(faults_.link_toggle)) {
          link_ok_[a][b] = !link_ok_[a][b];
          if (!link_ok_[a][b]) ++stats_.partitions;
          log("link n" + std::to_string(a + 1) + "->n" + std::to_string(b + 1) +
              (link_ok_[a][b] ? " healed" : " cut"));
        }
  }

  // Carries out what node i asked for.
  void flush(int i) {
    Node& n = nodes_[i];
    if (!n.up) return;
    const uint64_t inc = n.incarnation;
    for (Msg& m : n.member->take_messages()) deliver(i, std::move(m));
    for (const LeaseRequest& l : n.member->take_lease_requests()) {
      const int64_t at = std::max(now_ + 1 + rand_ms(faults_.max_authority_ms), authority_free_[i]);
      authority_free_[i] = at;  // one FIFO per node, as the real driver
      schedule(at, [this, i, inc, l] { authority(i, inc, l); });
    }
    for (const ClientOut& out : n.member->take_replies()) client_reply(i, out);
  }

  void deliver(int from, Msg m) {
    const int to = static_cast<int>(m.to) - 1;
    if (to < 0 || to >= kNodes) return;
    if (from != to && (!link_ok_[from][to] || chance(faults_.loss))) return;
    const int copies = from != to && chance(faults_.duplicate) ? 2 : 1;
    for (int k = 0; k < copies; ++k) {
      const uint64_t inc = nodes_[to].incarnation;
      schedule(now_ + 1 + rand_ms(faults_.max_delay_ms), [this, to, inc, m] {
        on_node(to, inc, [this, to, m] { arrive(to, m); });
      });
    }
  }

  void arrive(int to, const Msg& m) {
    Node& n = nodes_[to];
    Msg reply;
    if (serve_storage(m, n.storage, &reply)) {
      if (reply.ok && (m.kind == Msg::Kind::Open || m.kind == Msg::Kind::Put || m.kind == Msg::Kind::UnitPut)) {
        uint64_t& seen = fence_seen_[{to, m.slot}];
        if (m.epoch < seen && violation_.empty())
          violation_ = "FENCE: n" + std::to_string(to + 1) + " accepted " + msg_kind_name(m.kind) +
                       " of slot " + std::to_string(m.slot) + " at epoch " + std::to_string(m.epoch) +
                       " after epoch " + std::to_string(seen);
        seen = std::max(seen, m.epoch);
      }
      deliver(to, std::move(reply));
      return;
    }
    n.member->receive(now_, m);
  }

  void authority(int i, uint64_t inc, const LeaseRequest& l) {
    Lease& lease = leases_[l.slot];
    if (l.kind == LeaseRequest::Kind::Release) {
      if (lease.holder == i && lease.incarnation == inc) lease.holder = -1;
      return;
    }
    const bool mine = lease.holder == i && lease.incarnation == inc;
    const bool granted = mine || lease.holder < 0 || lease.expires <= now_;
    if (granted) {
      if (!mine) {
        lease.epoch += 1;  // a new holder (a restarted node is one too)
        lease.holder = i;
        lease.incarnation = inc;
      }
      lease.expires = now_ + config_.lease_ms;
    }
    const uint64_t epoch = lease.epoch;
    schedule(now_ + 1 + rand_ms(faults_.max_authority_ms), [this, i, inc, l, granted, epoch] {
      on_node(i, inc, [this, i, l, granted, epoch] {
        nodes_[i].member->lease_answered(now_, l.slot, l.request, granted, epoch);
      });
    });
  }

  // ---- invariants after every event ----
  void check() {
    if (!violation_.empty()) return;
    for (Slot s = 0; s < kSlots; ++s) {
      int serving = -1;
      for (int i = 0; i < kNodes; ++i) {
        if (!nodes_[i].up || !nodes_[i].member->serving(s, now_)) continue;
        if (serving >= 0) {
          violation_ = "TWO COORDINATORS of slot " + std::to_string(s) + ": n" +
                       std::to_string(serving + 1) + " and n" + std::to_string(i + 1);
          return;
        }
        serving = i;
        const uint64_t e = nodes_[i].member->epoch(s);
        const Lease& l = leases_[s];
        if (l.holder != i || l.incarnation != nodes_[i].incarnation || l.epoch != e || l.expires <= now_) {
          violation_ = "n" + std::to_string(i + 1) + " serves slot " + std::to_string(s) +
                       " at epoch " + std::to_string(e) + " without that lease (held by n" +
                       std::to_string(l.holder + 1) + " epoch " + std::to_string(l.epoch) +
                       " until " + std::to_string(l.expires) + ")";
          return;
        }
        if (last_server_[s] != std::make_pair(i, e)) {
          last_server_[s] = {i, e};
          log("slot " + std::to_string(s) + " served by n" + std::to_string(i + 1) + " epoch " +
              std::to_string(e));
        }
        auto [it, fresh] = served_by_.try_emplace({s, e}, i);
        if (!fresh && it->second != i) {
          violation_ = "slot " + std::to_string(s) + " epoch " + std::to_string(e) + " served by two nodes";
          return;
        }
      }
    }
  }

  // ---- clients ----
  void drive(Client& c) {
    if (!violation_.empty()) return;
    if (c.busy) {
      if (now_ - c.sent >= 300) send_call(c, false);
      return;
    }
    if (now_ < c.next_at) return;
    if (c.stopping) {
      if (c.reads_due) {
        c.reads_due = false;
        for (const auto& [f, file] : c.files)
          for (const auto& [g, op] : file.written) c.final_reads.push_back({f, g});
      }
      if (c.final_reads.empty()) return;
      auto [f, g] = c.final_reads.back();
      c.final_reads.pop_back();
      ClientOp op;
      op.kind = OpKind::Read;
      op.ino = f;
      op.group = g;
      begin(c, op);
      return;
    }
    if (!next_op(c)) c.next_at = now_ + 50;
  }

  std::string new_name(Client& c) { return "c" + std::to_string(c.id) + "." + std::to_string(++c.counter); }

  bool shared_op(Client& c) {
    ClientOp op;
    auto pick = [&](bool root) {
      size_t n = rng_() % (shared_.size() + (root ? 1 : 0));
      if (n == shared_.size()) return kRootIno;
      auto it = shared_.begin();
      std::advance(it, n);
      return it->first;
    };
    if (shared_.size() < 6 || rng_() % 4 == 0) {
      op.kind = OpKind::Mkdir;
      op.dir = pick(true);
      op.name = new_name(c);
    } else {
      const uint64_t moved = pick(false);
      op.kind = OpKind::Rename;
      op.dir = shared_[moved].first;
      op.name = shared_[moved].second;
      op.dir2 = pick(true);
      op.name2 = new_name(c);
    }
    begin(c, op);
    return true;
  }

  bool next_op(Client& c) {
    if (faults_.shared_tree) return shared_op(c);
    ClientOp op;
    std::vector<std::pair<std::pair<uint64_t, std::string>, std::pair<uint64_t, bool>>> files, dirs;
    for (const auto& e : c.entries) (e.second.second ? dirs : files).push_back(e);
    auto pick_dir = [&] {
      auto it = c.dirs.begin();
      std::advance(it, rng_() % c.dirs.size());
      return *it;
    };
    const int roll = static_cast<int>(rng_() % 100);
    if (roll < 15 || (files.empty() && roll < 60)) {
      op.kind = OpKind::Create;
      op.dir = pick_dir();
      op.name = new_name(c);
    } else if (roll < 30 || files.empty()) {
      op.kind = OpKind::Mkdir;
      op.dir = pick_dir();
      op.name = new_name(c);
    } else if (roll < 40) {
      const auto& f = files[rng_() % files.size()];
      op.kind = OpKind::Remove;
      op.dir = f.first.first;
      op.name = f.first.second;
    } else if (roll < 47) {
      std::vector<std::pair<uint64_t, std::string>> empty;
      for (const auto& d : dirs) {
        bool has = false;
        for (const auto& e : c.entries) has = has || e.first.first == d.second.first;
        if (!has) empty.push_back(d.first);
      }
      if (empty.empty()) return false;
      const auto& d = empty[rng_() % empty.size()];
      op.kind = OpKind::Rmdir;
      op.dir = d.first;
      op.name = d.second;
    } else if (roll < 55) {
      const auto& f = files[rng_() % files.size()];
      op.kind = OpKind::Link;
      op.ino = f.second.first;
      op.dir = pick_dir();
      op.name = new_name(c);
    } else if (roll < 65) {
      const bool dir = !dirs.empty() && rng_() % 3 == 0;
      const auto& e = dir ? dirs[rng_() % dirs.size()] : files[rng_() % files.size()];
      op.kind = OpKind::Rename;
      op.dir = e.first.first;
      op.name = e.first.second;
      op.dir2 = pick_dir();  // a directory may be moved under itself: refused
      op.name2 = new_name(c);
      if (!dir && rng_() % 2 == 0) {  // onto another file's name
        const auto& t = files[rng_() % files.size()];
        if (t.second.first != e.second.first) {
          op.dir2 = t.first.first;
          op.name2 = t.first.second;
        }
      }
    } else {
      const auto& f = files[rng_() % files.size()];
      op.kind = roll < 85 ? OpKind::Write : OpKind::Read;
      op.ino = f.second.first;
      op.group = static_cast<uint32_t>(rng_() % kGroups);
    }
    begin(c, op);
    return true;
  }

  void begin(Client& c, ClientOp op) {
    op.id = ++ops_;
    c.op = op;
    c.busy = true;
    c.target = static_cast<int>(rng_() % kNodes);
    send_call(c, true);
  }

  void send_call(Client& c, bool first) {
    c.sent = now_;
    // A WRITE is retransmitted to the node it was sent to (its address); other calls go to
    // the node last hinted, or anywhere.
    if (!first && c.op.kind != OpKind::Write && c.target < 0) c.target = static_cast<int>(rng_() % kNodes);
    const int to = c.target < 0 ? 0 : c.target;
    if (chance(faults_.loss)) return;
    const uint32_t client = c.id;
    const ClientOp op = c.op;
    const uint64_t inc = nodes_[to].incarnation;
    on_node(to, inc, [this, to, client, op] { nodes_[to].member->client_call(now_, client, op); });
  }

  void client_reply(int node, const ClientOut& out) {
    if (chance(faults_.loss)) return;
    Client& c = clients_[out.client];
    const ClientReply& r = out.reply;
    if (!c.busy || r.id != c.op.id) return;  // a late copy
    if (r.status == OpStatus::Retry) {
      if (c.op.kind != OpKind::Write) c.target = r.hint ? static_cast<int>(r.hint) - 1 : -1;
      c.sent = now_ - 300 + 20 + rand_ms(30);  // sent again soon (NFS3ERR_JUKEBOX's back-off)
      return;
    }
    if (faults_.shared_tree) {  // what a call finds is another's business: no reference
      if (r.status == OpStatus::Error) ++stats_.cycles_refused;
      if (r.status == OpStatus::Ok && c.op.kind == OpKind::Mkdir) shared_[r.ino] = {c.op.dir, c.op.name};
      if (r.status == OpStatus::Ok && c.op.kind == OpKind::Rename) {
        for (auto& [ino, at] : shared_)
          if (at == std::make_pair(c.op.dir, c.op.name)) at = {c.op.dir2, c.op.name2};
        if (c.op.dir != c.op.dir2) ++stats_.dir_moves;
      }
      c.busy = false;
      c.next_at = now_ + rand_ms(40);
      return;
    }
    if (r.status == OpStatus::Error) {
      if (!would_cycle(c, c.op)) {
        violation_ = "client " + std::to_string(c.id) + ": " + describe(c.op) + " failed";
        return;
      }
      ++stats_.cycles_refused;  // a directory moved under itself: refused, nothing changed
      c.busy = false;
      c.next_at = now_ + rand_ms(40);
      return;
    }
    if (would_cycle(c, c.op)) {
      violation_ = "CYCLE: " + describe(c.op) + " moved a directory under itself";
      return;
    }
    acknowledged(c, r, node);
    c.busy = false;
    c.next_at = now_ + rand_ms(40);
  }

  // By the client's own reference: `op` moves a directory into its own subtree.
  static bool would_cycle(const Client& c, const ClientOp& op) {
    if (op.kind != OpKind::Rename || op.dir2 == op.dir) return false;
    auto e = c.entries.find({op.dir, op.name});
    if (e == c.entries.end() || !e->second.second) return false;
    const uint64_t moved = e->second.first;
    for (uint64_t d = op.dir2; d != kRootIno;) {
      if (d == moved) return true;
      uint64_t parent = kRootIno;
      for (const auto& [k, v] : c.entries)
        if (v.first == d && v.second) parent = k.first;
      d = parent;
    }
    return false;
  }

  void acknowledged(Client& c, const ClientReply& r, int node) {
    const ClientOp& op = c.op;
    ++stats_.acked[op.kind];
    log("client " + std::to_string(c.id) + " acked " + describe(op) + " via n" +
        std::to_string(node + 1) + " ino " + std::to_string(r.ino ? r.ino : op.ino) + " g" +
        std::to_string(op.group));
    switch (op.kind) {
      case OpKind::Create:
      case OpKind::Mkdir:
        if (!made_.insert(r.ino).second) {
          violation_ = "inode " + std::to_string(r.ino) + " given out twice (" + describe(op) + ")";
          return;
        }
        c.entries[{op.dir, op.name}] = {r.ino, op.kind == OpKind::Mkdir};
        if (op.kind == OpKind::Mkdir) {
          c.dirs.insert(r.ino);
          if (slot_of(r.ino) != slot_of(op.dir)) ++stats_.cross_slot;
        }
        break;
      case OpKind::Remove:
      case OpKind::Rmdir: {
        const uint64_t ino = c.entries[{op.dir, op.name}].first;
        if (slot_of(ino) != slot_of(op.dir)) ++stats_.cross_slot;
        c.entries.erase({op.dir, op.name});
        if (op.kind == OpKind::Rmdir) c.dirs.erase(ino);
        bool named = false;
        for (const auto& e : c.entries) named = named || e.second.first == ino;
        if (!named) c.files.erase(ino);
        break;
      }
      case OpKind::Link:
        c.entries[{op.dir, op.name}] = {op.ino, false};
        if (slot_of(op.ino) != slot_of(op.dir)) ++stats_.cross_slot;
        break;
      case OpKind::Rename: {
        const auto v = c.entries[{op.dir, op.name}];
        c.entries.erase({op.dir, op.name});
        auto old = c.entries.find({op.dir2, op.name2});
        if (old != c.entries.end()) {  // it replaced a file: that one lost a name
          const uint64_t replaced = old->second.first;
          c.entries.erase(old);
          bool named = false;
          for (const auto& e : c.entries) named = named || e.second.first == replaced;
          if (!named) c.files.erase(replaced);
          ++stats_.replacing_renames;
        }
        c.entries[{op.dir2, op.name2}] = v;
        if (slot_of(op.dir) != slot_of(op.dir2)) ++stats_.cross_slot;
        if (v.second && op.dir != op.dir2) ++stats_.dir_moves;
        break;
      }
      case OpKind::Write:
        if (r.version.op != op.id) violation_ = "WRITE acknowledged with another call's version";
        c.files[op.ino].written[op.group] = op.id;
        break;
      case OpKind::Read: {
        uint64_t want = 0;
        auto f = c.files.find(op.ino);
        if (f != c.files.end() && f->second.written.count(op.group)) want = f->second.written[op.group];
        if (r.version.op != want) {
          violation_ = "LOST or STALE: READ of file " + std::to_string(op.ino) + " group " +
                       std::to_string(op.group) + " answered the version of call #" +
                       std::to_string(r.version.op) + ", the last acknowledged WRITE was #" +
                       std::to_string(want);
          return;
        }
        if (want) {
          int held = 0;
          for (int i = 0; i < kNodes; ++i)
            for (uint16_t k = 0; k < config_.units; ++k)
              held += nodes_[i].storage.store.has_unit(UnitId{op.ino, op.group, r.version, k}) ? 1 : 0;
          if (held < config_.units - 1)
            violation_ = "UNDECODABLE: file " + std::to_string(op.ino) + " group " +
                         std::to_string(op.group) + " has " + std::to_string(held) + " units";
        }
        break;
      }
    }
  }

  // Transactions still prepared or undecided in a served slot (they resolve by themselves).
  std::string undecided() const {
    std::string out;
    for (Slot s = 0; s < kSlots; ++s)
      for (const Node& n : nodes_) {
        if (!n.up || !n.member->serving(s, now_)) continue;
        for (const auto& [k, r] : *n.member->slot_state(s))
          if (k.kind == KeyKind::Tx && r.value.live &&
              (r.value.tx == TxState::Begun || r.value.tx == TxState::Prepared))
            out += " transaction " + std::to_string(k.a) + " undecided in slot " + std::to_string(s);
      }
    return out;
  }

  std::string every_slot_served() const {
    std::string out;
    for (Slot s = 0; s < kSlots; ++s) {
      bool served = false;
      for (int i = 0; i < kNodes; ++i) served = served || (nodes_[i].up && nodes_[i].member->serving(s, now_));
      if (!served) out += " slot " + std::to_string(s) + " unserved";
    }
    return out;
  }

 public:
  void finish_stats() {
    for (int i = 0; i < kNodes; ++i)
      if (nodes_[i].up) collect_takeovers(i);
  }

 private:
  std::mt19937_64 rng_;
  Faults faults_;
  CoordConfig config_;
  std::vector<Node> nodes_;
  std::vector<std::vector<bool>> link_ok_;
  std::vector<Client> clients_;
  std::map<Slot, Lease> leases_;
  std::map<int, int64_t> authority_free_;
  std::map<std::pair<int, Slot>, uint64_t> fence_seen_;
  std::map<std::pair<Slot, uint64_t>, int> served_by_;
  std::set<uint64_t> made_;  // every inode a CREATE or MKDIR was answered with
  std::map<uint64_t, std::pair<uint64_t, std::string>> shared_;  // shared_tree: dir -> where last seen
  std::map<Slot, std::pair<int, uint64_t>> last_server_;  // for the trace
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  uint64_t seq_ = 0;
  uint64_t ops_ = 0;
  uint64_t incarnations_ = 0;
  int64_t now_ = 0;
  std::string violation_;
  std::deque<std::string> trace_;
  Stats stats_;
};

}  // namespace nasd::scaleout::coord::testing
