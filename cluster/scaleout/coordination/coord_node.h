// One primary node of the scale-out coordination protocol (COORDINATION.md) as a pure state
// machine, in the manner of membership/cluster_member.h: no threads, sockets, clocks or drives.
// A driver feeds it the time, messages from other nodes, client calls and the lease
// authority's answers, and carries out what it asks: messages (to other nodes, or to a node's
// storage, served there by serve_storage), lease requests, client replies. Everything it holds
// is volatile: a kill loses it; what must survive is in the nodes' storage (NodeStorage).
//
// What it does:
//   * roles: wants the slots designated to it (rendezvous over the nodes it hears), holds each
//     under a lease whose every new holder has a higher epoch, trusts it until
//     sent + lease - margin; takes a slot over by opening it on every store (raising the fence,
//     reading its records from a majority), closing and reading the journal the slot's head
//     names at that journal's mirror, writing what it replayed and a new head to a majority, and
//     only then serving; tokens granted under an earlier epoch are then revoked by force;
//   * namespace calls of its slots: one slot's change is one journal record; a change that
//     spans slots is a two-phase transaction through the journals of every slot involved, with
//     recovery from the records at every step (presumed abort);
//   * byte-range tokens (a group of a file): granted and recorded in the journal, revoked when
//     another node needs the group or a READ must see it (the holder writes its group and
//     records it first), revoked by force when the holder does not answer (its journal is
//     closed at its mirror and its acknowledged writes taken from there);
//   * as an initiator: a WRITE is journaled in this node's journal under its token and
//     acknowledged once mirrored, then its units are put to their nodes under the token's epoch
//     and the new group version recorded at the coordinator.
// A journal record is acknowledged (its continuation run) only once it and every record before
// it are in the mirror, as the NVRAM journal does.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster/scaleout/coordination/coord_messages.h"

namespace nasd::scaleout::coord {

struct CoordConfig {
  NodeId self = 0;
  std::vector<NodeId> nodes;       // every primary, this one included, in ring order
  uint32_t slots = 16;
  int64_t heartbeat_ms = 100;
  int64_t failure_ms = 600;        // a node not heard from this long is dead
  int64_t lease_ms = 2000;
  int64_t renew_ms = 500;
  int64_t margin_ms = 400;
  int64_t retry_ms = 150;          // requests not answered are sent again
  int64_t revoke_ms = 800;         // a holder not answering a revocation is revoked by force
  int units = 3;                   // units per group (put on distinct nodes)
};
std::string validate(const CoordConfig& c);

struct LeaseRequest {
  enum class Kind { Acquire, Release } kind = Kind::Acquire;
  Slot slot = 0;
  uint64_t request = 0;
};

struct ClientOut {
  uint32_t client = 0;
  ClientReply reply;
};

class CoordNode {
 public:
  // `incarnation` must grow at every start of this node (its journal positions depend on it).
  CoordNode(CoordConfig config, uint64_t incarnation, int64_t now_ms);

  void tick(int64_t now_ms);
  void receive(int64_t now_ms, const Msg& m);
  void client_call(int64_t now_ms, uint32_t client, const ClientOp& op);
  // The authority's answer to an Acquire: granted with the lease's epoch, or not.
  void lease_answered(int64_t now_ms, Slot slot, uint64_t request, bool granted, uint64_t epoch);

  std::vector<Msg> take_messages();
  std::vector<LeaseRequest> take_lease_requests();
  std::vector<ClientOut> take_replies();

  // ---- queries ----
  NodeId self() const { return config_.self; }
  // Serving `slot` under a lease it still trusts at `now`.
  bool serving(Slot slot, int64_t now_ms) const;
  uint64_t epoch(Slot slot) const;
  // The slot's records as this node serves them (null when not serving).
  const Records* slot_state(Slot slot) const;
  NodeId cover_of(NodeId n) const;  // the node holding n's journal mirror
  // Units of a group: the nodes that hold them.
  std::vector<NodeId> unit_nodes(uint64_t file, uint32_t group) const;
  // One line per role, token and pending journal record: for status and a failing run's trace.
  std::string describe() const;
  // Time from a lease grant to serving, for every takeover done here (milliseconds).
  const std::vector<int64_t>& takeover_ms() const { return takeover_ms_; }

 private:
  enum class Phase { Acquiring, Opening, Replaying, Flushing, Serving };
  struct Force {                      // a forced revocation of one holder's tokens
    NodeId holder = 0;
    Stamp below;
    uint64_t request = 0;
    bool read = false;                // its journal was read at its mirror
    size_t outstanding = 0;           // groups still being striped and recorded
    int64_t sent = 0;
    std::map<std::pair<uint64_t, uint32_t>, Version> to_write;  // newest unrecorded version
  };
  struct Tx {                          // a transaction this node manages, in flight
    ClientOp op;
    uint32_t client = 0;
    std::map<Slot, Part> parts;        // remote parts
    std::set<Slot> yes, done;
    bool begun = true;                 // the Begin record is durable: prepares may go out
    bool decided = false, commit = false;
    bool ended = false;
    int64_t sent = 0;
    int64_t started = 0;
  };
  struct Pending {                     // a call waiting for a token to become free
    uint32_t client = 0;
    ClientOp op;
    NodeId requester = 0;              // TokenRequest from that node (0: a READ call)
    uint64_t incarnation = 0;          // ... and its incarnation
    uint64_t request = 0;
  };
  struct Revoking {
    int64_t since = 0;
    int64_t sent = 0;
  };
  struct Role {
    Phase phase = Phase::Acquiring;
    uint64_t epoch = 0;
    int64_t trusted_until = 0;
    int64_t renew_at = 0;
    uint64_t lease_request = 0;
    int64_t lease_sent = 0;
    int64_t granted_at = 0;
    uint64_t request = 0;              // Open / ReadJournal / Put round in flight
    int64_t sent = 0;
    std::map<NodeId, std::vector<Rec>> opened;
    std::set<NodeId> acked;
    Records state;
    std::vector<Rec> to_flush;
    NodeId journal = 0;
    uint64_t next_grant = 1;
    uint64_t next_tx = 1;
    std::map<Key, uint64_t> locks;     // key -> transaction holding it
    std::map<Key, uint64_t> unsettled; // key -> its newest record, not durable yet
    std::map<uint64_t, Tx> txs;        // managed here
    std::map<uint64_t, int64_t> queries;  // participant transactions asking their manager
    std::map<NodeId, Force> forces;
    std::map<std::pair<uint64_t, uint32_t>, Revoking> revoking;  // by group
    std::deque<Pending> waiting;
    std::set<uint64_t> in_flight_ops;  // client calls being carried out
    // RENAMEs into another slot's directory: what their target name held when asked (the
    // file it names, 0 none); the transaction's prepare checks it still does.
    std::map<uint64_t, uint64_t> targets;
    // RENAMEs of a directory into another one: the target directory's ancestors found so far,
    // (directory, its parent) from the target up to the root.
    std::map<uint64_t, std::vector<std::pair<uint64_t, uint64_t>>> walks;
  };
  struct Held {                        // a token held here (as an initiator)
    Stamp stamp;
    Slot slot = 0;
    Version dirty;                     // journaled, not recorded yet (empty: clean)
    Version writing;                   // being put and recorded
    Version recorded;                  // recorded at the coordinator
    bool flushing = false;             // units of `writing` being put
    bool recording = false;            // ... and its Record sent
    bool releasing = false;            // revoked: release once clean
    int64_t sent = 0;
  };
  struct WaitingWrite {
    uint32_t client = 0;
    ClientOp op;
  };
  struct UnitJob {                     // the units of one group version being put
    Slot slot = 0;
    uint64_t epoch = 0;
    uint64_t file = 0;
    uint32_t group = 0;
    Version version;
    std::set<int> acked;
    int64_t sent = 0;
    std::function<void(bool)> done;
  };
  struct Asked {
    uint64_t request = 0;
    int64_t sent = 0;
  };
  struct Append {                      // a journal record waiting for the mirror
    JournalRec rec;
    bool acked = false;
    bool refused = false;
    int64_t sent = 0;
    std::function<void()> then;
  };

  // roles
  std::vector<NodeId> alive() const;
  bool wants(Slot slot) const;
  void update_roles();
  void drop(Slot slot, bool release);
  void start_open(Slot slot, Role& r);
  void opened(Slot slot, Role& r);
  void replayed(Slot slot, Role& r, const std::vector<JournalRec>& recs);
  void start_serving(Slot slot, Role& r);
  void resend_role(Slot slot, Role& r);
  // journal
  void journal(Slot slot, const Stamp& stamp, std::vector<Rec> after, std::function<void()> then);
  void journal_write(Slot slot, const Stamp& stamp, uint64_t file, uint32_t group,
                     const Version& v, std::function<void()> then);
  void append(JournalRec rec, std::function<void()> then);
  void send_to_mirror(Append& a);
  void mirror_answered(uint64_t seq, bool ok);
  void run_durable();
  Role* serving_role(Slot slot);
  // The role still held under `epoch`, trusted or not (a continuation's bookkeeping).
  Role* role_at(Slot slot, uint64_t epoch);
  Rec make(Role& r, Key key, Value v) const;
  const Value* get(const Role& r, const Key& k) const;
  // namespace
  void run_op(Slot slot, Role& r, uint32_t client, const ClientOp& op);
  bool plan(Role& r, Slot slot, const ClientOp& op, uint64_t target,
            const std::vector<std::pair<uint64_t, uint64_t>>& chain, std::vector<Part>* parts,
            uint64_t* made, OpStatus* status);
  bool rename_target(Slot slot, Role& r, const ClientOp& op, uint64_t* target);
  // False while the walk goes on; then *chain, or *cycle when the directory would be moved
  // under itself.
  bool ancestors(Slot slot, Role& r, const ClientOp& op, uint64_t moved,
                 std::vector<std::pair<uint64_t, uint64_t>>* chain, bool* cycle);
  void on_lookup(const Msg& m);
  void on_looked_up(const Msg& m);
  bool check(const Role& r, const Change& c, uint64_t tx) const;
  void apply(Role& r, const Change& c, std::vector<Rec>* out);
  void lock(Role& r, const Change& c, uint64_t tx);
  void unlock(Role& r, uint64_t tx);
  Key lock_key(const Change& c) const;
  void reply(uint32_t client, const ClientReply& rep);
  void finish_tx(Slot slot, Role& r, uint64_t tx, bool commit);
  void on_prepare(const Msg& m);
  void on_vote(const Msg& m);
  void on_decide(const Msg& m);
  void on_decided(const Msg& m);
  void on_query(const Msg& m);
  void pump_txs(Slot slot, Role& r);
  // tokens and groups (coordinator side)
  void on_token_request(const Msg& m);
  void on_released(const Msg& m);
  void on_record(const Msg& m);
  bool group_free(Slot slot, Role& r, uint64_t file, uint32_t group);
  void grant(Slot slot, Role& r, const Pending& p);
  void serve_waiting(Slot slot, Role& r);
  void start_force(Slot slot, Role& r, NodeId holder);
  void pump_forces(Slot slot, Role& r);
  void forced_read(Slot slot, Role& r, NodeId holder, const std::vector<JournalRec>& recs);
  void finish_force(Slot slot, Role& r, NodeId holder);
  bool unsettled(const Role& r, const Key& k) const;
  void put_units(Slot slot, uint64_t epoch, uint64_t file, uint32_t group, const Version& v,
                 std::function<void(bool)> done);
  void pump_unit_job(uint64_t id, UnitJob& job);
  void pump_units();
  // tokens and groups (initiator side)
  void run_write(uint32_t client, const ClientOp& op);
  void do_write(uint32_t client, const ClientOp& op, Held& h);
  void ask_token(std::pair<uint64_t, uint32_t> g);
  void maybe_release(std::pair<uint64_t, uint32_t> g);
  void on_grant(const Msg& m);
  void on_revoke(const Msg& m);
  void on_unit_reply(const Msg& m);
  void on_recorded(const Msg& m);
  void pump_held();
  void lose_token(std::pair<uint64_t, uint32_t> g);
  void send(Msg m);
  NodeId route(Slot slot) const;

  const CoordConfig config_;
  const uint64_t incarnation_;
  int64_t now_;
  uint64_t next_seq_ = 1;
  uint64_t next_request_ = 1;
  uint64_t next_version_ = 1;  // the counter of this node's group versions
  int64_t next_heartbeat_ = 0;
  std::map<NodeId, int64_t> heard_;
  std::map<Slot, NodeId> routes_;
  std::map<Slot, Role> roles_;
  std::map<uint64_t, Append> appends_;   // by seq
  std::map<std::pair<uint64_t, uint32_t>, Held> held_;
  std::map<std::pair<uint64_t, uint32_t>, std::deque<WaitingWrite>> writes_;
  std::map<std::pair<uint64_t, uint32_t>, Asked> token_asked_;
  // The newest token of each group this incarnation released: a late Grant of it (the
  // coordinator answering a request before it saw the release) must not be taken again, and
  // the next request names it so that a lost Released does not keep it recorded forever.
  std::map<std::pair<uint64_t, uint32_t>, Stamp> given_up_;
  std::map<uint64_t, UnitJob> unit_jobs_;
  std::map<Slot, int64_t> retry_at_;
  std::map<Slot, uint64_t> last_epoch_;  // the epoch of this node's latest role of each slot   // a slot given up is asked for again from then
  std::map<uint64_t, ClientReply> write_replies_;  // this incarnation's WRITE replies, by op
  std::vector<Msg> out_;
  std::vector<LeaseRequest> lease_out_;
  std::vector<ClientOut> replies_;
  std::vector<int64_t> takeover_ms_;
};

}  // namespace nasd::scaleout::coord
