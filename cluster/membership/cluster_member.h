// One node of an N-node cluster (2 to 8 nodes), as a pure state machine: PairMember grown from
// one partner to many. No threads, sockets or clocks: a driver feeds it events with the
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
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster/membership/failure_detector.h"
#include "cluster/membership/heartbeat.h"
#include "cluster/membership/lease_authority.h"

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
    Serve,          // open the volume (replay the covered node's mirror first if not home)
    Unserve,        // stop serving at once; report volume_closed() once quiesced
    Route,          // requests for `volume` should go to `node` (a hint, for forwarding)
  };
  Kind kind;
  uint32_t volume = 0;
  uint64_t request = 0;  // AcquireLease only
  std::string node;      // SendHeartbeat, Route
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
  // Operator failback (the home volumes back from whoever covers them).
  void request_failback(int64_t now_ms, bool wanted);
  // Planned failover: the home volumes go to the node that covers this one.
  void request_failover(int64_t now_ms);
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
  // Volumes this node may ever hold: its own and those of the nodes it covers.
  std::vector<uint32_t> candidates() const;

 private:
  struct Peer {
    explicit Peer(const ClusterMemberConfig& c, int64_t now)
        : detector(c.heartbeat_interval_ms, c.missed_heartbeats, now) {}
    FailureDetector detector;
    bool heard = false;
    uint64_t incarnation = 0;
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
  };

  void advance(int64_t now_ms);
  bool alive(const std::string& node) const;
  bool is_home(const Slot& s) const { return s.home == config_.self; }
  bool wanted(const Slot& s) const;
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
  int64_t authority_seen_at_ = -1;
  int64_t next_heartbeat_ = 0;
  uint64_t next_request_ = 1;
  uint64_t view_ = 1;
  MemberState state_ = MemberState::Starting;
  std::map<uint32_t, Slot> volumes_;         // candidates only
  std::map<uint32_t, std::string> routes_;   // every volume: where it was last routed
  std::vector<MemberAction> actions_;
};

}  // namespace nasd::membership
