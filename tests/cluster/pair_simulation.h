// TEST FIXTURE ONLY: a deterministic simulation of a two-node pair. Both PairMembers run
// against a simulated clock, network (delays, one-way partitions), lease authority (delays,
// per-node loss of the storage path, FIFO per node like the real driver) and volume opening,
// all driven by one seeded random generator, so a failing run is replayed exactly from its
// seed. After every event it checks the safety invariant: no volume is trusted by two nodes at
// once, and a node only trusts a lease the authority really gave it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "cluster/membership/lease_authority.h"
#include "cluster/membership/pair_member.h"
#include "tests/cluster/etcd_store_model.h"

namespace nasd::cluster::testing {

struct SimFaults {
  double link_toggle = 0.003;  // per step and direction: cut or heal the link
  double san_toggle = 0.002;   // per step and node: lose or regain the storage path
  double crash = 0.001;        // per step and live node
  double restart = 0.01;       // per step and dead node
  int64_t max_step_ms = 40;
  int64_t max_net_delay_ms = 60;
  int64_t max_authority_delay_ms = 40;
  int64_t max_open_ms = 300;
  // false: the authority grants every request (no fencing at all). Used to show that the
  // checker does catch split brain, i.e. that fencing is what keeps the invariant.
  bool fencing = true;
  // The authority is etcd (EtcdStoreModel): a take is a read, then a grant and a
  // create-if-absent transaction later (another node's steps may come between), a renewal a
  // keepalive, a release a delete-if-unchanged and a revoke; leases expire on etcd's side,
  // lazily; the epoch is the key's create_revision.
  bool etcd = false;
  bool etcd_cas = true;              // false: the create is an unconditional put (broken)
  double etcd_outage_toggle = 0.001; // per step: etcd loses or regains its quorum
  double etcd_leader_change = 0.002; // per step: a new leader extends every lease
  double etcd_unrelated_write = 0.05;
};

struct SimStats {
  int takeovers = 0;   // a node started serving one of its partner's volumes
  int failbacks = 0;   // a node released a partner volume after closing it
  int crashes = 0, partitions = 0, san_cuts = 0;
  int etcd_outages = 0, etcd_leader_changes = 0, etcd_lost_races = 0;
};

using LeaseAnswerFields = membership::LeaseAnswer;

class PairSimulation {
 public:
  PairSimulation(uint64_t seed, SimFaults faults, membership::PairConfig a,
                 membership::PairConfig b, bool trace = false);

  // Simulates `ms` milliseconds, injecting faults if asked. Returns "" or the first violation.
  std::string run(int64_t ms, bool faults);
  // Both nodes up, links and storage paths restored.
  void heal();
  // "" when every volume is served by exactly one node, its home node.
  std::string check_converged() const;

  const SimStats& stats() const { return stats_; }
  // The last events (only recorded when constructed with trace = true).
  std::string trace() const;

 private:
  struct Node {
    membership::PairConfig config;
    std::unique_ptr<membership::PairMember> member;
    bool up = true;
    uint64_t incarnation = 1;
    bool san_ok = true;
    int64_t authority_free_at = 0;  // keeps this node's lease requests FIFO
  };
  struct Event {
    int64_t at;
    uint64_t seq;
    std::function<void()> fn;
    bool operator>(const Event& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  void schedule(int64_t at, std::function<void()> fn);
  int64_t rand_ms(int64_t max) { return max <= 0 ? 0 : static_cast<int64_t>(rng_() % (max + 1)); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  void carry_out(int i);  // the actions node i asked for
  void inject_faults();
  void crash(int i);
  void restart(int i);
  std::string check_safety() const;
  // etcd mode: node i's lease request `a`, in the steps EtcdLeaseAuthority takes.
  void etcd_request(int i, uint64_t incarnation, const membership::PairAction& a);
  void etcd_answer(int i, uint64_t incarnation, const membership::PairAction& a,
                   LeaseAnswerFields answer);
  void log(const std::string& line);
  bool alive(int i, uint64_t incarnation) const {
    return nodes_[i].up && nodes_[i].incarnation == incarnation;
  }

  std::mt19937_64 rng_;
  const SimFaults faults_;
  const bool tracing_;
  int64_t now_ = 0;
  uint64_t next_seq_ = 0;
  Node nodes_[2];
  bool link_ok_[2] = {true, true};  // link_ok_[i]: node i's messages reach the other
  std::map<uint32_t, membership::Lease> authority_;
  EtcdStoreModel etcd_;
  bool etcd_up_ = true;
  int64_t next_revoke_at_ = EtcdStoreModel::kRevokeEveryMs;
  std::map<uint32_t, membership::Lease> last_grant_;  // etcd mode: the epochs handed out
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  std::string violation_;
  std::deque<std::string> trace_;
  SimStats stats_;
};

}  // namespace nasd::cluster::testing
