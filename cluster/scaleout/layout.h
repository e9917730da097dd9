// Where the units of a protection group go: pure functions of the policy, the cluster's
// topology (which nodes and drives are alive) and the group's identity. No I/O.
//
// A group holds N data units and M parity units of kStripeUnit bytes each (the last data unit
// may be shorter; every unit of a group has the same stored length). A small file (one
// stripe unit or less) is a group with N = 1: the M "parity" units of a one-unit group are
// copies, so it is mirrored M+1 ways with no special case. Metadata uses one more copy
// (metadata_shape).
//
// Placement invariants (checked by check_placement, relied on by re-protect and reads):
//   * every unit of a group is on a distinct (node, drive);
//   * at most b units of a group on one node;
//   * units only on alive nodes and healthy drives at the time they are placed.
// Hence losing floor(M/b) nodes or M drives loses at most M units: the group stays readable.
//
// Fewer nodes alive: the width shrinks first (N = alive*b - M, down to 1), keeping M, so the
// promised tolerance holds. Only when even N = 1 does not fit is M lowered (the group is then
// "under-protected" and reports it); with no healthy drive at all nothing can be written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/scaleout/protection_policy.h"

namespace nasd::scaleout {

struct DriveState {
  bool healthy = true;
};

struct NodeState {
  uint32_t id = 0;
  bool alive = true;
  std::vector<DriveState> drives;
  int healthy_drives() const;
};

struct Topology {
  std::vector<NodeState> nodes;  // ordered by id
  int alive_nodes() const;
  const NodeState* node(uint32_t id) const;
  bool usable(uint32_t node, uint32_t drive) const;  // alive node, healthy drive
};

struct GroupShape {
  int data = 0;      // N (1 for a mirrored small file or metadata)
  int parity = 0;    // M (copies - 1 when data == 1)
  int per_node = 0;  // b actually applied
  bool under_protected = false;  // M or b below what the policy asks for
  int width() const { return data + parity; }
};

struct UnitPlace {
  uint32_t node = 0;
  uint32_t drive = 0;
  bool operator==(const UnitPlace& o) const { return node == o.node && drive == o.drive; }
};

// The shape of a file-data group holding `bytes` (> 0) bytes under `policy` on `topology`.
// Returns false (and why) when no healthy drive is left.
bool data_shape(const ProtectionPolicy& policy, const Topology& topology, uint64_t bytes,
                GroupShape* out, std::string* error);
// Metadata: mirrored one level more than data (M+2 copies), spread over nodes.
bool metadata_shape(const ProtectionPolicy& policy, const Topology& topology, GroupShape* out,
                    std::string* error);

// Places the units of group (`file`, `group`) of `shape`: dealt round the group's own order of
// the alive nodes (rendezvous hashing, so groups spread evenly and a new node takes a fair
// share), distinct healthy drives within a node.
bool place_group(const GroupShape& shape, const Topology& topology, uint64_t file,
                 uint64_t group, std::vector<UnitPlace>* out, std::string* error);

// New places for the units at `lost` (indexes into `current`), honouring the invariants
// together with the units that stay. Used by re-protect; false when the survivors cannot hold
// them (then the group stays degraded and says so).
bool replace_units(const GroupShape& shape, const Topology& topology,
                   const std::vector<UnitPlace>& current, const std::vector<int>& lost,
                   uint64_t file, uint64_t group, std::vector<UnitPlace>* out, std::string* error);

// Rebalance (OneFS AutoBalance). Each group has its own order of the nodes (rendezvous hashing
// of the group and node ids); its balanced spread deals its units round that order, one per
// node per round, up to b: what place_group does on that topology. A node added to the
// cluster enters every group's order at a random rank, so it is due its fair share of units
// (width/nodes per group on average), and the relative order of the other nodes never changes,
// so a group moves only the units the new node is due. Returns the indexes that move (empty:
// balanced, or some unit is on an unusable place, which is re-protect's work) with *out =
// `current` with those indexes on their new places (distinct healthy drives, at most b per
// node). Pure and deterministic; its result is balanced, so a group never moves again until
// the topology changes.
std::vector<int> rebalance_units(const GroupShape& shape, const Topology& topology,
                                 const std::vector<UnitPlace>& current, uint64_t file,
                                 uint64_t group, std::vector<UnitPlace>* out);

// Empty when `places` satisfy the placement invariants for `shape` on `topology` (with
// `require_usable` every place must also be on an alive node and healthy drive).
std::string check_placement(const GroupShape& shape, const Topology& topology,
                            const std::vector<UnitPlace>& places, bool require_usable);

// Groups a file of `size` bytes is cut into, each holding `data_per_group` units.
uint64_t group_count(uint64_t size, int data_per_group);

}  // namespace nasd::scaleout
