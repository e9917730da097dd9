#include "cluster/scaleout/layout.h"

#include <algorithm>
#include <map>
#include <set>

namespace nasd::scaleout {
namespace {

uint64_t mix(uint64_t x) {  // splitmix64 finaliser: spreads consecutive ids evenly
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t group_hash(uint64_t file, uint64_t group) { return mix(mix(file) ^ group); }

std::vector<const NodeState*> usable_nodes(const Topology& t) {
  std::vector<const NodeState*> out;
  for (const NodeState& n : t.nodes) {
    if (n.alive && n.healthy_drives() > 0) out.push_back(&n);
  }
  return out;
}

// The usable nodes in the group's own order (rendezvous hashing: highest mix(group, node)
// first). Adding or losing a node leaves the relative order of the others unchanged, so a new
// node takes a fair share of the groups' units and no unaffected group moves.
std::vector<const NodeState*> group_order(const Topology& t, uint64_t h) {
  std::vector<std::pair<uint64_t, const NodeState*>> scored;
  for (const NodeState* n : usable_nodes(t)) scored.push_back({mix(h ^ mix(n->id)), n});
  std::sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second->id < b.second->id;
  });
  std::vector<const NodeState*> out;
  for (const auto& s : scored) out.push_back(s.second);
  return out;
}

// Units a group may put on the usable nodes with at most `b` per node.
int capacity(const Topology& t, int b) {
  int c = 0;
  for (const NodeState* n : usable_nodes(t)) c += std::min(b, n->healthy_drives());
  return c;
}

int max_drives(const Topology& t) {
  int m = 0;
  for (const NodeState* n : usable_nodes(t)) m = std::max(m, n->healthy_drives());
  return m;
}

// Fits a group wanting `want_data` data units and `parity` parity units at `b` per node: the
// width shrinks first, then b is relaxed (keeping drive tolerance), then parity is lowered.
bool fit(int want_data, int parity, int b, const Topology& t, GroupShape* out,
         std::string* error) {
  if (capacity(t, 1) == 0) {
    *error = "no alive node with a healthy drive";
    return false;
  }
  GroupShape s;
  int c = capacity(t, b);
  if (c >= 1 + parity) {
    s.data = std::min(want_data, c - parity);
    s.parity = parity;
    s.per_node = b;
    *out = s;
    return true;
  }
  for (int bb = b + 1; bb <= max_drives(t); ++bb) {
    if (capacity(t, bb) >= 1 + parity) {
      s.data = std::min(want_data, capacity(t, bb) - parity);
      s.parity = parity;
      s.per_node = bb;
      s.under_protected = true;
      *out = s;
      return true;
    }
  }
  int all = capacity(t, max_drives(t));
  s.data = 1;
  s.parity = all - 1;
  s.per_node = max_drives(t);
  s.under_protected = true;
  *out = s;
  return true;
}

}  // namespace

int NodeState::healthy_drives() const {
  int n = 0;
  for (const DriveState& d : drives) n += d.healthy ? 1 : 0;
  return n;
}

int Topology::alive_nodes() const {
  int n = 0;
  for (const NodeState& s : nodes) n += s.alive ? 1 : 0;
  return n;
}

const NodeState* Topology::node(uint32_t id) const {
  for (const NodeState& s : nodes) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

bool Topology::usable(uint32_t node_id, uint32_t drive) const {
  const NodeState* n = node(node_id);
  return n && n->alive && drive < n->drives.size() && n->drives[drive].healthy;
}

bool data_shape(const ProtectionPolicy& policy, const Topology& topology, uint64_t bytes,
                GroupShape* out, std::string* error) {
  uint64_t units = (bytes + kStripeUnit - 1) / kStripeUnit;
  int want = policy.data_width > 0 ? policy.data_width : kMaxData;
  if (units < static_cast<uint64_t>(want)) want = static_cast<int>(std::max<uint64_t>(units, 1));
  return fit(want, policy.parity, policy.per_node, topology, out, error);
}

bool metadata_shape(const ProtectionPolicy& policy, const Topology& topology, GroupShape* out,
                    std::string* error) {
  if (!fit(1, policy.parity + 1, 1, topology, out, error)) return false;
  if (out->parity < policy.parity + 1) out->under_protected = true;
  return true;
}

bool place_group(const GroupShape& shape, const Topology& topology, uint64_t file,
                 uint64_t group, std::vector<UnitPlace>* out, std::string* error) {
  std::vector<UnitPlace> none;
  std::vector<int> all;
  for (int i = 0; i < shape.width(); ++i) all.push_back(i);
  none.resize(shape.width());
  return replace_units(shape, topology, none, all, file, group, out, error);
}

bool replace_units(const GroupShape& shape, const Topology& topology,
                   const std::vector<UnitPlace>& current, const std::vector<int>& lost,
                   uint64_t file, uint64_t group, std::vector<UnitPlace>* out,
                   std::string* error) {
  if (static_cast<int>(current.size()) != shape.width()) {
    *error = "placement has the wrong number of units";
    return false;
  }
  std::set<int> lost_set(lost.begin(), lost.end());
  std::map<uint32_t, int> per_node;
  std::set<std::pair<uint32_t, uint32_t>> used;
  for (int i = 0; i < shape.width(); ++i) {
    if (lost_set.count(i)) continue;
    ++per_node[current[i].node];
    used.insert({current[i].node, current[i].drive});
  }
  const uint64_t h = group_hash(file, group);
  std::vector<const NodeState*> nodes = group_order(topology, h);
  if (nodes.empty()) {
    *error = "no alive node with a healthy drive";
    return false;
  }
  size_t cursor = 0;
  std::vector<UnitPlace> result = current;
  for (int i : lost) {
    // The next node in the rotation with the fewest units of this group that still has room.
    const NodeState* best = nullptr;
    int best_count = 0;
    size_t best_at = 0;
    for (size_t k = 0; k < nodes.size(); ++k) {
      size_t at = (cursor + k) % nodes.size();
      const NodeState* n = nodes[at];
      int count = per_node[n->id];
      int room = std::min(shape.per_node, n->healthy_drives()) - count;
      if (room <= 0) continue;
      if (!best || count < best_count) {
        best = n;
        best_count = count;
        best_at = at;
      }
    }
    if (!best) {
      *error = "not enough nodes and drives left to place unit " + std::to_string(i);
      return false;
    }
    const size_t drives = best->drives.size();
    const size_t start = (h >> 32) % drives + static_cast<size_t>(i);
    bool placed = false;
    for (size_t d = 0; d < drives && !placed; ++d) {
      uint32_t drive = static_cast<uint32_t>((start + d) % drives);
      if (!best->drives[drive].healthy || used.count({best->id, drive})) continue;
      result[i] = UnitPlace{best->id, drive};
      used.insert({best->id, drive});
      ++per_node[best->id];
      placed = true;
    }
    if (!placed) {
      *error = "no free healthy drive on node " + std::to_string(best->id);
      return false;
    }
    cursor = (best_at + 1) % nodes.size();
  }
  *out = std::move(result);
  return true;
}

std::vector<int> rebalance_units(const GroupShape& shape, const Topology& topology,
                                 const std::vector<UnitPlace>& current, uint64_t file,
                                 uint64_t group, std::vector<UnitPlace>* out) {
  *out = current;
  std::vector<int> moved;
  if (static_cast<int>(current.size()) != shape.width()) return moved;
  for (const UnitPlace& p : current) {
    if (!topology.usable(p.node, p.drive)) return moved;
  }
  const uint64_t h = group_hash(file, group);
  std::vector<const NodeState*> nodes = group_order(topology, h);
  // The balanced counts: the units dealt round the group's node order, one each per round,
  // up to b (and the node's healthy drives). place_group deals exactly so, hence a group
  // placed on this topology is balanced as written.
  std::map<uint32_t, int> target, count;
  int left = shape.width();
  for (bool gave = true; left > 0 && gave;) {
    gave = false;
    for (const NodeState* n : nodes) {
      if (left == 0) break;
      if (target[n->id] < std::min(shape.per_node, n->healthy_drives())) {
        ++target[n->id];
        --left;
        gave = true;
      }
    }
  }
  if (left > 0) return moved;  // does not fit at this b: nothing better to do here
  std::set<std::pair<uint32_t, uint32_t>> used;
  for (const UnitPlace& p : current) {
    ++count[p.node];
    used.insert({p.node, p.drive});
  }
  for (const NodeState* lo : nodes) {
    while (count[lo->id] < target[lo->id]) {
      // Take the highest index from a node holding more than its target.
      int which = -1;
      for (int i = shape.width() - 1; i >= 0 && which < 0; --i) {
        const uint32_t from = (*out)[i].node;
        if (count[from] > target[from]) which = i;
      }
      if (which < 0) return {};  // cannot happen: the counts and targets sum alike
      const size_t drives = lo->drives.size();
      const size_t start = (h >> 32) % drives + static_cast<size_t>(which);
      bool placed = false;
      for (size_t d = 0; d < drives && !placed; ++d) {
        const uint32_t drive = static_cast<uint32_t>((start + d) % drives);
        if (!lo->drives[drive].healthy || used.count({lo->id, drive})) continue;
        used.erase({(*out)[which].node, (*out)[which].drive});
        used.insert({lo->id, drive});
        --count[(*out)[which].node];
        ++count[lo->id];
        (*out)[which] = UnitPlace{lo->id, drive};
        placed = true;
      }
      if (!placed) {  // cannot happen: below target means below its healthy drives
        *out = current;
        return {};
      }
      moved.push_back(which);
    }
  }
  return moved;
}

std::string check_placement(const GroupShape& shape, const Topology& topology,
                            const std::vector<UnitPlace>& places, bool require_usable) {
  if (static_cast<int>(places.size()) != shape.width()) return "wrong number of units";
  std::map<uint32_t, int> per_node;
  std::set<std::pair<uint32_t, uint32_t>> used;
  for (size_t i = 0; i < places.size(); ++i) {
    const UnitPlace& p = places[i];
    if (!used.insert({p.node, p.drive}).second) {
      return "units share node " + std::to_string(p.node) + " drive " + std::to_string(p.drive);
    }
    if (++per_node[p.node] > shape.per_node) {
      return "more than " + std::to_string(shape.per_node) + " units on node " +
             std::to_string(p.node);
    }
    if (require_usable && !topology.usable(p.node, p.drive)) {
      return "unit " + std::to_string(i) + " on a dead node or failed drive";
    }
  }
  return "";
}

uint64_t group_count(uint64_t size, int data_per_group) {
  const uint64_t per_group = static_cast<uint64_t>(data_per_group) * kStripeUnit;
  return per_group == 0 ? 0 : (size + per_group - 1) / per_group;
}

}  // namespace nasd::scaleout
