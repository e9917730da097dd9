// One node's half of an active/active pair, as a pure state machine: no threads, sockets or
// clocks of its own. A driver feeds it events (time passing, heartbeats, lease answers, a
// volume finished opening) with the current time, and carries out the actions it asks for
// (send a heartbeat, acquire/renew or release a lease, start or stop serving a volume). Being
// deterministic, it is tested by simulating thousands of random runs with partitions, lost
// storage paths and restarts (tests/cluster/pair_simulation_test.cc).
//
// Safety rests on leases alone (see lease_authority.h): a volume is served only while this node
// holds a lease it trusts, and trust ends `safety_margin_ms` before the lease could expire at the
// authority, measured from when the request was *sent*. Heartbeats only decide when to *try*
// to take the partner's volumes over, and when to give them back.
//
// Pair states (derived from the facts after every event):
//   Starting          not heard from the partner yet, and not suspecting it either
//   BothUp            partner alive; each node serves its home volumes
//   PartnerSuspected  partner silent for `missed_heartbeats` intervals; trying to fence it by
//                     acquiring its volumes' leases (refused while it still renews them)
//   PartnerFenced     holding leases of partner volumes, still opening (journal replay) some
//   TakenOver         serving the partner's volumes
//   FailbackRequested partner is back and asked for its volumes: closing them (journal drained),
//                     then releasing their leases so the partner can acquire them
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cluster/membership/failure_detector.h"
#include "cluster/membership/heartbeat.h"
#include "cluster/membership/lease_authority.h"

namespace nasd::membership {

struct PairConfig {
  std::string self;
  std::string partner;
  std::vector<uint32_t> home;          // served here while both nodes are up
  std::vector<uint32_t> partner_home;  // served by the partner while both are up
  int64_t heartbeat_interval_ms = 200;
  int missed_heartbeats = 5;
  int64_t lease_ms = 4000;          // requested lease length
  int64_t renew_after_ms = 1000;    // renew once this much of a lease has passed
  int64_t safety_margin_ms = 1000;  // stop trusting a lease this long before it can expire
  int64_t retry_ms = 500;           // pause after a refused or failed acquire
  bool auto_failback = true;        // ask for home volumes back as soon as possible
  // A node that has not heard from its partner since it started leaves the partner's volumes
  // alone this long: two nodes of a pair rarely start at the same instant.
  int64_t startup_grace_ms = 0;
};

// Empty when usable; otherwise what is wrong (e.g. a margin that leaves no time to renew).
std::string validate(const PairConfig& config);

enum class PairState { Starting, BothUp, PartnerSuspected, PartnerFenced, TakenOver, FailbackRequested };
const char* pair_state_name(PairState s);

struct PairAction {
  enum class Kind {
    SendHeartbeat,  // send heartbeat() to the partner
    AcquireLease,   // acquire or renew; report with lease_answered(volume, request, ...)
    ReleaseLease,   // give the lease up (no answer needed)
    Serve,          // open the volume (replay its journal) and serve it; then volume_ready()
    Unserve,        // stop serving the volume at once; report volume_closed() once it is
                    // quiesced (needed before a failback can release the lease)
  };
  Kind kind;
  uint32_t volume = 0;
  uint64_t request = 0;  // AcquireLease only
};

class PairMember {
 public:
  // `incarnation` must differ at every start (e.g. start time in ms).
  PairMember(PairConfig config, uint64_t incarnation, int64_t now_ms);

  // ---- events ----
  void tick(int64_t now_ms);
  void heartbeat_received(int64_t now_ms, const Heartbeat& hb);
  // Lease requests must be carried out in the order they were asked for (one FIFO per node).
  void lease_answered(int64_t now_ms, uint32_t volume, uint64_t request, const LeaseAnswer& answer);
  void volume_ready(int64_t now_ms, uint32_t volume);
  void volume_closed(int64_t now_ms, uint32_t volume);
  // Operator failback when auto_failback is off; it also ends a planned failover.
  void request_failback(int64_t now_ms, bool wanted);
  // Planned failover: hand the home volumes to the partner (drained, then released; the
  // partner picks them up once it sees we no longer hold them). Ends with request_failback.
  void request_failover(int64_t now_ms);
  bool standby() const { return standby_; }

  // Actions produced by the events so far, in the order they must be carried out.
  std::vector<PairAction> take_actions();

  // ---- queries ----
  PairState state() const { return state_; }
  uint64_t view() const { return view_; }
  // Holds a lease on `volume` that is still trustworthy at `now_ms`.
  bool may_serve(uint32_t volume, int64_t now_ms) const;
  // Until when (this member's clock) a held lease is trusted; 0 when not held.
  int64_t trusted_until(uint32_t volume) const;
  // may_serve and opened: requests for it should be routed here.
  bool serving(uint32_t volume, int64_t now_ms) const;
  Heartbeat heartbeat() const;
  const PairConfig& config() const { return config_; }

 private:
  struct Slot {
    bool home = false;
    bool held = false;          // we believe we hold the lease
    int64_t trusted_until = 0;  // ... until then
    int64_t renew_at = 0;
    uint64_t outstanding = 0;   // acquire awaiting its answer (0: none)
    int64_t outstanding_sent = 0;
    int64_t next_attempt = 0;
    bool serve_asked = false;   // Serve emitted
    bool ready = false;         // volume_ready received
    bool closing = false;       // Unserve emitted for a failback; lease kept until closed
    int64_t partner_served_at = 0;  // partner volumes: last heartbeat saying it serves them
  };

  void advance(int64_t now_ms);
  bool partner_alive() const { return !detector_.suspects(now_); }
  bool wanted(const Slot& s) const;
  bool wants_failback() const;
  void update_leases();
  void send_acquire(uint32_t volume, Slot& s);
  void drop(uint32_t volume, Slot& s);
  void release(uint32_t volume, Slot& s);
  void update_state();
  void emit(PairAction::Kind kind, uint32_t volume, uint64_t request = 0);

  const PairConfig config_;
  const uint64_t incarnation_;
  const int64_t started_at_;
  int64_t now_;
  FailureDetector detector_;
  bool heard_partner_ = false;
  uint64_t partner_incarnation_ = 0;
  bool partner_wants_failback_ = false;
  bool operator_failback_ = false;
  bool standby_ = false;  // planned failover: home volumes are left to the partner
  int64_t authority_seen_at_ = -1;  // last answer that proved the authority reachable
  int64_t next_heartbeat_ = 0;
  uint64_t next_request_ = 1;
  uint64_t view_ = 1;
  PairState state_ = PairState::Starting;
  std::map<uint32_t, Slot> volumes_;
  std::vector<PairAction> actions_;
};

}  // namespace nasd::membership
