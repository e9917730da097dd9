// A deterministic simulation, with random faults from a seed, of the two owner-side rules that
// keep a forwarded call from running twice or late (issue 13):
//  - session fencing (interconnect/link_session.h): a forwarder's newer connection fences its
//    older ones, and is admitted only once their running calls have ended;
//  - answered calls (nvram/answered_calls.h): a copy of an identified call gets the first reply.
// The owner's side is the real LinkSessions, LinkSession::Call and AnsweredCalls, driven from
// one thread (drain and copy waits of 0: "refuse unless idle now"), so no step blocks and no
// clock matters. The forwarders' side is a model of PeerClient's rules: a connection is aborted
// (its unsent frames discarded) before a call on it is answered JUKEBOX, and every close resets
// (Socket::reset_when_closed, so a kill -9 leaves nothing in the wire either).
//
// The world: one NFS client making calls one after the other (call = "append my xid to the
// owner's log"), two forwarding nodes, frames that wait on the wire and in the owner's socket
// buffer, an owner that reads them, queues them for workers and runs them for a few steps.
// Faults: a forwarder's call times out, a forwarder is killed (and later restarts with a new
// incarnation), frames wait arbitrarily long. The client re-issues a JUKEBOXed call with a new
// xid through the same node, and retransmits the same xid through the other node when its node
// died. Checked after every step:
//  1. no xid runs twice (copies are answered);
//  2. a call a live forwarder answered JUKEBOX never takes effect (ends running) after the
//     client sent its next call through that forwarder (fencing and the drain before admission);
//  3. every call the client saw acknowledged ran.
// (A dead forwarder's copy whose retransmission was JUKEBOXed and re-issued under a new xid is
// not covered by either rule -- cluster/README.md, "Known gaps" -- and is only counted here.)
#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cluster/interconnect/link_session.h"
#include "nvram/answered_calls.h"

namespace nasd::interconnect {
namespace {

using namespace std::chrono_literals;
using nvram::AnsweredCalls;

struct Conn {
  int node = 0;
  std::shared_ptr<LinkSession> session;  // the owner's, once the hello was handled
  bool open = false;                     // hello admitted
  bool reset = false;                    // the forwarder's end is gone
  std::deque<uint32_t> wire;             // sent, not yet in the owner's socket buffer
  std::deque<uint32_t> buffer;           // in the owner's socket buffer, not yet read
};

struct Forwarder {
  bool alive = true;
  uint64_t incarnation = 0, generation = 0;
  int conn = -1;                        // the connection in use (open or saying hello)
  std::map<uint32_t, int> pending;      // xid -> connection it left on
};

struct Queued {
  int conn;
  uint32_t xid;
};
struct Running {
  int conn;
  uint32_t xid;
  LinkSession::Call call;
  AnsweredCalls::Claim claim;
};

class World {
 public:
  World(uint64_t seed, bool reset_on_kill) : rng_(seed), reset_on_kill_(reset_on_kill) {
    for (auto& f : fwd_) f.incarnation = rng_();
  }

  std::string step() {
    switch (pick(10)) {
      case 0: client_sends(); break;
      case 1: connect(); break;
      case 2: case 3: deliver(); break;
      case 4: owner_reads(); break;
      case 5: worker_starts(); break;
      case 6: worker_ends(); break;
      case 7: if (pick(4) == 0) timeout(); break;
      case 8: if (pick(12) == 0) kill(); else restart(); break;
      case 9: client_retransmits(); break;
    }
    return violation_;
  }
  uint64_t acknowledged() const { return acknowledged_; }
  uint64_t uncovered_late_copies() const { return uncovered_; }
  uint64_t fenced() const { return sessions_.fenced_count(); }

 private:
  size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  static AnsweredCalls::Key key(uint32_t xid) {
    fs::CallIdentity id;
    id.xid = xid;
    id.proc = 8;
    return AnsweredCalls::key_of(id, fs::call::VolumeOp::Create);
  }

  // --- the client: one call at a time.
  bool usable(int node) const {
    const Forwarder& f = fwd_[node];
    return f.alive && f.conn >= 0 && conns_[f.conn].open;
  }
  void client_sends() {
    if (waiting_) return;
    if (!fwd_[via_].alive) {
      // The client's address moved to the other node. What its old node gave up on is left to
      // no rule (that node's sessions are fenced only when it connects again): only counted.
      for (uint32_t x : given_up_[via_]) uncovered_watch_.insert(x);
      given_up_[via_].clear();
      via_ = 1 - via_;
    }
    if (!usable(via_)) return;
    xid_ = next_xid_++;
    // Sending a new call after a JUKEBOX through this node: the given-up one may not run now.
    for (uint32_t x : given_up_[via_]) moved_on_[via_].insert(x);
    given_up_[via_].clear();
    waiting_ = true;
    send(via_, xid_);
  }
  void send(int node, uint32_t xid) {
    Forwarder& f = fwd_[node];
    conns_[f.conn].wire.push_back(xid);
    f.pending[xid] = f.conn;
  }
  void client_retransmits() {
    // The client's node died (no answer will come): the same xid again, through the node its
    // address moved to
    // (or restarted, having forgotten it).
    if (!waiting_ || fwd_[via_].pending.count(xid_)) return;
    const int node = int(pick(2));
    if (!usable(node)) return;
    via_ = node;
    send(node, xid_);
  }
  void answer(int node, uint32_t xid, bool ok) {
    Forwarder& f = fwd_[node];
    f.pending.erase(xid);
    if (!waiting_ || xid != xid_ || via_ != node) return;
    waiting_ = false;
    if (ok) {
      ++acknowledged_;
      if (!ran_.count(xid)) violation_ = "xid " + std::to_string(xid) + " acknowledged, never ran";
    } else {
      given_up_[node].insert(xid);  // JUKEBOX: re-issued with a new xid by client_sends()
    }
  }

  // --- the forwarders (PeerClient's rules).
  void connect() {
    const int node = int(pick(2));
    Forwarder& f = fwd_[node];
    if (!f.alive) return;
    if (f.conn >= 0 && !conns_[f.conn].open && !conns_[f.conn].session) {
      // The hello reaches the owner: admitted (older sessions fenced and idle) or refused.
      Conn& c = conns_[f.conn];
      c.session = std::make_shared<LinkSession>(
          SessionId{node ? "c" : "a", "main", f.incarnation, f.generation}, nullptr);
      if (sessions_.admit(c.session, 0ms).empty()) {
        c.open = true;
      } else {
        abort(node, f.conn);
      }
      return;
    }
    if (f.conn >= 0) return;
    conns_.emplace_back();
    conns_.back().node = node;
    f.conn = int(conns_.size()) - 1;
    ++f.generation;
  }
  // Resets the connection (unsent frames discarded) and fails its calls JUKEBOX.
  void abort(int node, int conn) {
    Forwarder& f = fwd_[node];
    conns_[conn].reset = true;
    conns_[conn].wire.clear();
    if (f.conn == conn) f.conn = -1;
    std::vector<uint32_t> failed;
    for (auto& [x, c] : f.pending)
      if (c == conn) failed.push_back(x);
    for (uint32_t x : failed) answer(node, x, false);
  }
  void timeout() {
    const int node = int(pick(2));
    Forwarder& f = fwd_[node];
    if (!f.alive || f.pending.empty()) return;
    auto it = f.pending.begin();
    std::advance(it, pick(f.pending.size()));
    abort(node, it->second);  // before the JUKEBOX, as PeerClient does
  }
  void kill() {
    const int node = int(pick(2));
    Forwarder& f = fwd_[node];
    if (!f.alive) return;
    f.alive = false;
    for (size_t i = 0; i < conns_.size(); ++i) {
      if (conns_[i].node != node || conns_[i].reset) continue;
      conns_[i].reset = true;
      if (reset_on_kill_) conns_[i].wire.clear();  // else the kernel goes on sending them
    }
    f.pending.clear();
    f.conn = -1;
  }
  void restart() {
    const int node = int(pick(2));
    Forwarder& f = fwd_[node];
    if (f.alive) return;
    f = Forwarder{};
    f.incarnation = rng_();
  }

  // --- the network and the owner.
  void deliver() {
    std::vector<int> busy;
    for (size_t i = 0; i < conns_.size(); ++i)
      if (!conns_[i].wire.empty()) busy.push_back(int(i));
    if (busy.empty()) return;
    Conn& c = conns_[busy[pick(busy.size())]];
    c.buffer.push_back(c.wire.front());
    c.wire.pop_front();
  }
  void owner_reads() {
    std::vector<int> ready;
    for (size_t i = 0; i < conns_.size(); ++i)
      if (!conns_[i].buffer.empty() && conns_[i].session && !conns_[i].session->fenced())
        ready.push_back(int(i));
    if (ready.empty()) return;
    const int i = ready[pick(ready.size())];
    queue_.push_back({i, conns_[i].buffer.front()});
    conns_[i].buffer.pop_front();
  }
  void worker_starts() {
    if (queue_.empty()) return;
    const size_t at = pick(queue_.size());
    const Queued q = queue_[at];
    queue_.erase(queue_.begin() + long(at));
    LinkSession::Call call = conns_[q.conn].session->begin();
    if (!call) return;  // fenced while queued: dropped unanswered
    AnsweredCalls::Turn turn = answered_.claim(key(q.xid), 0ms);
    if (turn.answer || !turn.claim) {
      reply(q.conn, q.xid, turn.answer.has_value());
      return;
    }
    // The call runs now; its effect is in place when it ends (worker_ends).
    if (!ran_.insert(q.xid).second) violation_ = "xid " + std::to_string(q.xid) + " ran twice";
    running_.push_back({q.conn, q.xid, std::move(call), std::move(turn.claim)});
  }
  void worker_ends() {
    if (running_.empty()) return;
    const size_t at = pick(running_.size());
    Running r = std::move(running_[at]);
    running_.erase(running_.begin() + long(at));
    // Its effect lands now: never after the client's next call through the node that gave up.
    const int node = conns_[r.conn].node;
    if (moved_on_[node].count(r.xid))
      violation_ = "xid " + std::to_string(r.xid) + ", given up on by node " +
                   std::to_string(node) + ", took effect after the client's next call through it";
    for (int other = 0; other < 2; ++other)
      if (other != node && moved_on_[other].count(r.xid)) ++uncovered_;
    if (uncovered_watch_.count(r.xid)) ++uncovered_;
    fs::call::VolumeReply ok;
    ok.op = fs::call::VolumeOp::Create;
    ok.status = fs::Status::Ok;
    r.claim.answered(ok);
    r.claim = AnsweredCalls::Claim();  // published
    r.call = LinkSession::Call();      // the session's call ended
    reply(r.conn, r.xid, true);
  }
  void reply(int conn, uint32_t xid, bool ok) {
    const Conn& c = conns_[conn];
    Forwarder& f = fwd_[c.node];
    if (c.reset || !f.alive) return;  // nobody reads it
    auto it = f.pending.find(xid);
    if (it != f.pending.end() && it->second == conn) answer(c.node, xid, ok);
  }

  std::mt19937_64 rng_;
  const bool reset_on_kill_;
  LinkSessions sessions_;
  AnsweredCalls answered_{1 << 16};
  std::vector<Conn> conns_;
  Forwarder fwd_[2];
  std::deque<Queued> queue_;
  std::vector<Running> running_;
  // The client.
  int via_ = 0;
  bool waiting_ = false;
  uint32_t xid_ = 0, next_xid_ = 1;
  std::set<uint32_t> given_up_[2], moved_on_[2], uncovered_watch_;
  std::set<uint32_t> ran_;
  uint64_t acknowledged_ = 0, uncovered_ = 0;
  std::string violation_;
};

TEST(LinkFenceSimulation, RandomTimeoutsKillsAndDelaysNeverRunACallTwiceOrLate) {
  uint64_t acknowledged = 0, fenced = 0, uncovered = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    // Odd seeds: forwarders close gracefully when killed (their kernel goes on sending).
    World world(seed, /*reset_on_kill=*/seed % 2 == 0);
    for (int i = 0; i < 5000; ++i) {
      const std::string violation = world.step();
      ASSERT_TRUE(violation.empty()) << "seed " << seed << " step " << i << ": " << violation;
    }
    acknowledged += world.acknowledged();
    fenced += world.fenced();
    uncovered += world.uncovered_late_copies();
  }
  EXPECT_GT(acknowledged, 5000u) << "the client made too little progress to prove anything";
  EXPECT_GT(fenced, 100u) << "no connection was ever fenced";
  RecordProperty("uncovered_late_copies", std::to_string(uncovered));
  std::printf("acknowledged %llu, fenced %llu, late copies of a dead node (not covered) %llu\n",
              (unsigned long long)acknowledged, (unsigned long long)fenced,
              (unsigned long long)uncovered);
}

}  // namespace
}  // namespace nasd::interconnect
