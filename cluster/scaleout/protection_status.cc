#include "cluster/scaleout/protection_status.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace nasd::scaleout {

const char* group_state_name(GroupState s) {
  switch (s) {
    case GroupState::Full: return "FULL";
    case GroupState::Degraded: return "DEGRADED";
    case GroupState::Lost: return "LOST";
  }
  return "?";
}

ProtectionStatus protection_status(const ProtectionJob& job, const ProtectionPolicy& policy,
                                   size_t max_listed) {
  ProtectionStatus s;
  s.policy = policy.to_string();
  const Topology& topo = job.topology();
  s.nodes = static_cast<int>(topo.nodes.size());
  s.nodes_alive = topo.alive_nodes();
  s.job = job.progress();
  for (const NodeState& n : topo.nodes) s.units_per_node[n.id] = 0;  // a new node shows 0
  std::vector<GroupStatus> all;
  for (const auto& [e, r] : job.catalog()) {
    GroupStatus g;
    g.file = r.file;
    g.offset = r.offset;
    g.length = r.length;
    g.version = r.version;
    g.shape = r.shape;
    for (const UnitPlace& p : r.places) {
      ++s.units_per_node[p.node];
      if (topo.usable(p.node, p.drive)) {
        ++g.full_units;
      } else {
        ++g.lost_units;
      }
    }
    if (g.lost_units > r.shape.parity) {
      g.state = GroupState::Lost;
      ++s.groups_lost;
    } else if (!job.fully_protected(r)) {
      g.state = GroupState::Degraded;
      ++s.groups_degraded;
    } else {
      ++s.groups_full;
      g.shaped = job.shaped(r);
      g.balanced = job.balanced(r);
      s.groups_misshaped += g.shaped ? 0 : 1;
      s.groups_unbalanced += g.balanced ? 0 : 1;
    }
    s.units_lost += static_cast<uint64_t>(g.lost_units);
    ++s.groups;
    all.push_back(g);
  }
  // The groups that need attention first (lost, degraded, unbalanced), in catalog order.
  std::stable_sort(all.begin(), all.end(), [](const GroupStatus& a, const GroupStatus& b) {
    const int ra = a.state == GroupState::Full ? (a.balanced ? 3 : 2) : 2 - static_cast<int>(a.state);
    const int rb = b.state == GroupState::Full ? (b.balanced ? 3 : 2) : 2 - static_cast<int>(b.state);
    return ra < rb;
  });
  if (all.size() > max_listed) {
    s.not_listed = all.size() - max_listed;
    all.resize(max_listed);
  }
  s.listed = std::move(all);
  return s;
}

std::string format_protection_status(const std::string& volume, const ProtectionStatus& s) {
  std::ostringstream o;
  const char* health = s.groups_lost ? "LOST DATA (until nodes return)"
                       : s.groups_degraded ? "DEGRADED"
                                           : "FULL";
  o << "volume " << volume << ": protection " << s.policy << ", " << health << "\n";
  o << "  nodes " << s.nodes_alive << "/" << s.nodes << " alive; groups " << s.groups << ": "
    << s.groups_full << " full, " << s.groups_degraded << " degraded, " << s.groups_lost
    << " lost, " << s.groups_unbalanced << " unbalanced; units lost " << s.units_lost
    << "; restripe due " << s.groups_misshaped << "\n";
  if (!s.units_per_node.empty()) {
    uint64_t units = 0;
    for (const auto& [node, n] : s.units_per_node) units += n;
    o << "  units per node:";
    for (const auto& [node, count] : s.units_per_node)
      o << " " << node << "=" << count << " (" << (units ? count * 100 / units : 0) << "%)";
    o << "\n";
  }
  const JobProgress& j = s.job;
  const uint64_t pct = j.total ? j.done * 100 / j.total : 100;
  std::ostringstream run;
  run << job_kind_name(j.kind) << " " << j.done << "/" << j.total << " groups (" << pct << "%), "
      << j.inflight << " in flight, " << j.units_rebuilt << " units written, " << j.groups_moved
      << " groups rebalanced, " << j.groups_restriped << " groups restriped, " << j.unrecoverable
      << " unrecoverable";
  if (j.running) {
    o << "  job running: " << run.str();
  } else if (j.total) {
    o << "  job idle; last run: " << run.str();
  } else {
    o << "  job idle";
  }
  o << "\n  " << s.sweep.text() << "\n";
  if (!s.listed.empty()) o << "  group (file@offset)        version  shape    units full/lost  state\n";
  for (const GroupStatus& g : s.listed) {
    std::ostringstream name, shape;
    name << g.file << "@" << g.offset;
    shape << g.shape.data << "+" << g.shape.parity << "/" << g.shape.per_node;
    o << "  " << name.str() << std::string(name.str().size() < 26 ? 26 - name.str().size() : 1, ' ')
      << g.version << "  " << shape.str() << std::string(shape.str().size() < 8 ? 8 - shape.str().size() : 1, ' ')
      << " " << g.full_units << "/" << g.lost_units << "            "
      << group_state_name(g.state) << (g.state == GroupState::Full && !g.balanced ? " unbalanced" : "")
      << (g.state == GroupState::Full && !g.shaped ? " restripe-due" : "")
      << (g.shape.under_protected ? " under-protected" : "") << "\n";
  }
  if (s.not_listed) o << "  ... " << s.not_listed << " more groups not listed\n";
  return o.str();
}

void ProtectionBoard::publish(const std::string& volume, ProtectionStatus status) {
  std::lock_guard<std::mutex> lock(mu_);
  volumes_[volume] = std::move(status);
}

void ProtectionBoard::remove(const std::string& volume) {
  std::lock_guard<std::mutex> lock(mu_);
  volumes_.erase(volume);
}

std::string ProtectionBoard::render(const std::vector<std::string>& args) const {
  if (args.size() > 1) throw std::invalid_argument("usage: protection [VOLUME]");
  if (!args.empty() && (args[0].empty() || args[0].size() > 255)) {
    throw std::invalid_argument("protection: a volume name is 1 to 255 bytes");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (volumes_.empty()) return "protection: no scale-out volume is coordinated by this node\n";
  std::string out;
  for (const auto& [name, status] : volumes_) {
    if (!args.empty() && args[0] != name) continue;
    out += format_protection_status(name, status);
  }
  if (out.empty()) throw std::invalid_argument("protection: no scale-out volume " + args[0] + " here");
  return out;
}

}  // namespace nasd::scaleout
