// TEST HELPER ONLY: drives one ClusterMember by hand, as its service would, for the directed
// scenarios (cluster_member_test.cc, placement_test.cc); the random ones run in the simulation
// (cluster_simulation.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cluster/membership/cluster_member.h"
#include "cluster/membership/placement.h"

namespace nasd::membership::testing {

using LeaseAnswers = std::function<LeaseAnswer(uint32_t volume)>;

// Every lease request gets `verdict`.
inline LeaseAnswers answer_all(LeaseVerdict verdict) {
  return [verdict](uint32_t) { return LeaseAnswer{verdict, {}, ""}; };
}

// Every 50 ms over [from, to]: the nodes in `alive` heartbeat what they hold (first
// incarnation, no failback asked), the member ticks, and its actions are carried out at once:
// a lease request is answered by `leases`, a placement read with `*placement` (unanswered
// without one), an open is ready and a close is clean. Returns every action.
inline std::vector<MemberAction> drive(ClusterMember& m, int64_t from, int64_t to,
                                       const std::map<std::string, std::vector<uint32_t>>& alive,
                                       const LeaseAnswers& leases,
                                       const Placement* placement = nullptr) {
  using Kind = MemberAction::Kind;
  std::vector<MemberAction> out;
  for (int64_t t = from; t <= to; t += 50) {
    for (const auto& [node, holding] : alive) m.heartbeat_received(t, {node, 1, 1, holding, false});
    m.tick(t);
    for (int round = 0; round < 50; ++round) {
      auto acts = m.take_actions();
      if (acts.empty()) break;
      for (const auto& a : acts) {
        out.push_back(a);
        if (a.kind == Kind::AcquireLease) m.lease_answered(t, a.volume, a.request, leases(a.volume));
        if (a.kind == Kind::ReadPlacement && placement) m.placement_read(t, a.request, true, *placement);
        if (a.kind == Kind::Serve) m.volume_ready(t, a.volume);
        if (a.kind == Kind::Unserve) m.volume_closed(t, a.volume, true);
      }
    }
  }
  return out;
}

// Whether `acts` holds a `kind` action for `volume` (and, if given, about `node`).
inline bool has(const std::vector<MemberAction>& acts, MemberAction::Kind kind, uint32_t volume,
                const std::string& node = "") {
  for (const auto& a : acts)
    if (a.kind == kind && a.volume == volume && (node.empty() || a.node == node)) return true;
  return false;
}

}  // namespace nasd::membership::testing
