// One node of an N-node cluster (2 to 8 nodes; the HA pair is a ring of two), as a pure state
// machine. No threads, sockets or clocks: a driver feeds it events with the
// current time and carries out the actions it asks for, and the same deterministic simulation
// drives it with random kills, pauses, partitions and lost messages
// (tests/cluster/cluster_simulation_test.cc).
//
// Who may take over whom: every node has home volumes (those of its EVSes; none for a standby)
// and *covers* the nodes whose NVRAM mirror it holds (a ring: its predecessor; the standby of
// an N+1 cluster: every primary). A node only ever tries to take over the volumes of the nodes
// it covers, because only it can replay their acknowledged operations. It does so when a
// covered node falls silent (`missed_heartbeats` intervals), and gives them back when that node
// is alive again and asks (failback, automatic or on command), exactly as a pair does.
//
// Safety rests on leases alone (lease_authority.h), as in the pair: a volume is served only
// while this node holds a lease it trusts, trust ends `safety_margin_ms` before the lease can
// expire at the authority (measured from when the request was sent), and the authority grants a
// lease to another node only after it expired. Heartbeats only decide when to *try*.
//
// Routing: every node heartbeats every other node and says which volumes it holds, so each node
// learns where a volume went and routes its requests there (Route actions). A wrong route costs
// a JUKEBOX and a retransmit, never a second owner.
//
// Planned moves (placement.h): with `placement_from_authority`, a volume's home is not fixed by
// the config but *designated* by the placement record at the authority, fed in with
// placement_changed() (nothing is acquired before the first one, so a node never acts on a
// config that a move has overtaken). The cover rule follows the designated node: a node serves
// what is designated to it, and what is designated to a dead node it covers. A node holding a
// volume that is moving elsewhere closes it cleanly and asks for a HandOver (marked at the
// authority under the volume's lease, see placement.h); once that is done it releases the
// lease, and the volume is wanted by nobody until the move commits, when its new designated
// node acquires the lease and opens it, with nothing to replay. The node covering the new one
// leaves it alone for two leases after the commit, even if that node seems silent or slow:
// a rescue or takeover at the first missed heartbeats would strand a moved volume on the
// cover until a failback (manual by default) for a hiccup.
// The record is read on every heartbeat interval (ReadPlacement), and a volume whose lease was
// just granted is opened only after a read that began after the grant: while a node holds a
// volume's lease, nobody else can change where that volume is designated (a commit needs the
// holder's own hand-over), so that read tells whose NVRAM to replay -- a node that was cut off
// when a move committed never replays the wrong node's mirror.
// The same read carries the stale-mirror marks (Placement::stale_mirrors): a covered node that
// acknowledged stable writes its mirror lacks marked that at the authority before the first
// of them, while it held its leases. A grant here comes after those leases ran out, so the
// read after the grant sees the mark, and the volume is released instead of served from the
// stale copy; it stays unserved until its node returns or the mark is cleared (by the node once
// its mirror caught up, or by the admin who accepts the loss).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster/membership/failure_detector.h"
#include "cluster/membership/heartbeat.h"
#include "cluster/membership/lease_authority.h"
#include "cluster/membership/placement.h"

namespace nasd::membership {

struct ClusterMemberConfig {
  std::string self;
  std::vector<std::string> peers;             // every other node of the cluster
  std::map<uint32_t, std::string> home;       // every volume of the cluster -> its home node
  std::set<std::string> covers;               // peers whose volumes this node takes over
  int64_t heartbeat_interval_ms = 200;
  int missed_heartbeats = 5;
  int64_t lease_ms = 4000;
  int64_t renew_after_ms = 1000;
  int64_t safety_margin_ms = 1000;
  int64_t retry_ms = 500;
  bool auto_failback = true;
  int64_t startup_grace_ms = 0;  // a covered node never heard from is left alone this long
  // Designated nodes come from placement_changed() (planned moves); `home` is only the
  // fallback for a volume the placement does not name.
  bool placement_from_authority = false;
};

// Empty when usable; otherwise what is wrong.
std::string validate(const ClusterMemberConfig& config);

// The node's own view, for status: what it is doing.
enum class MemberState {
  Starting,   // not heard from every covered node yet
  Normal,     // serving its home volumes (or, a standby, nothing), every covered node alive
  Covering,   // a covered node is silent: fencing it, opening or serving its volumes
  HandingBack // a covered node is back and asked for its volumes: draining them
};
const char* member_state_name(MemberState s);

struct MemberAction {
  enum class Kind {
    SendHeartbeat,  // send heartbeat() to `node` (one action per peer)
    AcquireLease,   // acquire or renew; report with lease_answered(volume, request, ...)
    ReleaseLease,   // give the lease up (no answer needed)
    Serve,          // open the volume; `node`: the covered node whose mirror to replay first
                    // ("" when it is designated here)
    Unserve,        // stop serving at once; report volume_closed() once quiesced
    Route,          // requests for `volume` should go to `node` (a hint, for forwarding)
    ReadPlacement,  // read the placement record; report with placement_read(request, ...)
    HandOver,       // the volume is closed cleanly for its move: mark it handed at the
                    // authority, only while this node holds its lease at `epoch`; report with
                    // handover_answered(volume, request, ...)
  };
  Kind kind;
  uint32_t volume = 0;
  uint64_t request = 0;  // AcquireLease, HandOver, ReadPlacement
  std::string node;      // SendHeartbeat, Route, Serve
  uint64_t epoch = 0;    // HandOver: the lease epoch it holds the volume under
};

class ClusterMember {
 public:
  // `incarnation` must differ at every start.
  ClusterMember(ClusterMemberConfig config, uint64_t incarnation, int64_t now_ms);

  // ---- events ----
  void tick(int64_t now_ms);
  void heartbeat_received(int64_t now_ms, const Heartbeat& hb);
  // Lease requests must be carried out in the order they were asked for (one FIFO per node).
  void lease_answered(int64_t now_ms, uint32_t volume, uint64_t request, const LeaseAnswer& answer);
  void volume_ready(int64_t now_ms, uint32_t volume);
  void volume_closed(int64_t now_ms, uint32_t volume);
  // `clean`: every acknowledged operation is in the file system (the close's flush worked), so
  // the next owner needs nothing from this node's NVRAM.
  void volume_closed(int64_t now_ms, uint32_t volume, bool clean);
  // The authority's placement record (with placement_from_authority): designated nodes, moves.
  // placement_changed: a record this node wrote itself; placement_read: the answer to a
  // ReadPlacement (`ok` false: the authority could not be read).
  void placement_changed(int64_t now_ms, const Placement& placement);
  void placement_read(int64_t now_ms, uint64_t request, bool ok, const Placement& placement);
  // The answer to a HandOver: `done` when the authority marked the volume handed (feed the
  // record it wrote with placement_changed first).
  void handover_answered(int64_t now_ms, uint32_t volume, uint64_t request, bool done);
  // Operator failback (the home volumes back from whoever covers them).
  void request_failback(int64_t now_ms, bool wanted);
  // Planned failover: the home volumes go to the node that covers this one.
  void request_failover(int64_t now_ms);
  // The node has begun to stop: what it holds is renewed until it is closed, but nothing new
  // is taken. A node stopped with the rest of the cluster would otherwise take over the
  // volumes of those that stopped a moment before it, replay them, and close them again.
  void quiesce(int64_t now_ms);
  bool standby() const { return standby_; }

  std::vector<MemberAction> take_actions();

  // ---- queries ----
  MemberState state() const { return state_; }
  uint64_t view() const { return view_; }
  bool may_serve(uint32_t volume, int64_t now_ms) const;
  int64_t trusted_until(uint32_t volume) const;
  bool serving(uint32_t volume, int64_t now_ms) const;
  Heartbeat heartbeat() const;
  const ClusterMemberConfig& config() const { return config_; }
  // The peer believed alive (heard within the failure timeout).
  bool peer_alive(const std::string& node) const;
  // Where requests for a volume go (this node when it serves it).
  std::string route(uint32_t volume) const;
  // Volumes this node may hold (every volume: a move may designate any of them here).
  std::vector<uint32_t> candidates() const;
  // The node a volume is designated to (the placement's, else its configured home).
  std::string designated(uint32_t volume) const;
  bool placement_known() const { return placement_known_; }
  const Placement& placement() const { return placement_; }
  // Latched: since its start this node has opened every volume designated to it (none for a
  // standby), or 3 leases have passed trying. Until then a node that is coming back keeps its
  // stale-mirror mark (stale_mirror_mark.h): clearing it earlier lets the partner, which has
  // not heard from this run yet, take those volumes over from under it.
  bool settled() const { return settled_; }

 private:
  struct Peer {
    explicit Peer(const ClusterMemberConfig& c, int64_t now)
        : detector(c.heartbeat_interval_ms, c.missed_heartbeats, now) {}
    FailureDetector detector;
    bool heard = false;
    uint64_t incarnation = 0;
    int64_t started_at = 0;  // when this node first heard its current incarnation (its start)
    bool wants_failback = false;
    std::set<uint32_t> holding;
  };
  struct Slot {
    std::string home;
    bool held = false;
    int64_t trusted_until = 0;
    int64_t renew_at = 0;
    uint64_t outstanding = 0;
    int64_t outstanding_sent = 0;
    int64_t next_attempt = 0;
    bool serve_asked = false;
    bool ready = false;
    bool closing = false;
    int64_t home_served_at = 0;  // covered volumes: last heartbeat of its home node holding it
    uint64_t epoch = 0;          // of the lease held
    bool handing = false;        // closing (or closed) for a move, until the hand-over is done
    uint64_t handover = 0;       // the HandOver request in flight (0: none)
    int64_t next_handover = 0;   // retry a refused or failed hand-over from then
    bool awaiting_read = false;  // granted; opened after a placement read from `read_after` on
    uint64_t read_after = 0;
    int64_t designated_at = INT64_MIN / 2;  // when a move, seen here, designated it to `home`
  };

  void advance(int64_t now_ms);
  bool alive(const std::string& node) const;
  bool is_home(const Slot& s) const { return s.home == config_.self; }
  bool wanted(uint32_t volume, const Slot& s) const;
  bool relevant(const Slot& s) const { return is_home(s) || config_.covers.count(s.home) > 0; }
  bool moving_away(uint32_t volume) const;
  bool moving_here(uint32_t volume) const;
  void update_handovers();
  void send_handover(uint32_t volume, Slot& s);
  void serve(uint32_t volume, Slot& s);
  bool wants_failback() const;
  void update_leases();
  void update_routes();
  void send_acquire(uint32_t volume, Slot& s);
  void drop(uint32_t volume, Slot& s);
  void release(uint32_t volume, Slot& s);
  void update_state();
  void emit(MemberAction::Kind kind, uint32_t volume, uint64_t request = 0, std::string node = "");

  const ClusterMemberConfig config_;
  const uint64_t incarnation_;
  const int64_t started_at_;
  int64_t now_;
  std::map<std::string, Peer> peers_;
  bool operator_failback_ = false;
  bool standby_ = false;
  bool quiescing_ = false;
  int64_t authority_seen_at_ = -1;
  // The latest lease answer was Unreachable; and when an answer came again after such a run
  // (no rescue of an alive node's volume during the outage or for two leases after it).
  bool authority_unreachable_ = false;
  int64_t authority_back_at_ = INT64_MIN / 2;
  int64_t next_heartbeat_ = 0;
  uint64_t next_request_ = 1;
  uint64_t view_ = 1;
  MemberState state_ = MemberState::Starting;
  bool settled_ = false;
  Placement placement_;
  bool placement_known_ = false;
  uint64_t next_read_ = 1;
  int64_t next_placement_read_ = 0;
  void read_placement();
  std::map<uint32_t, Slot> volumes_;         // every volume
  std::map<uint32_t, std::string> routes_;   // every volume: where it was last routed
  std::vector<MemberAction> actions_;
};

}  // namespace nasd::membership
