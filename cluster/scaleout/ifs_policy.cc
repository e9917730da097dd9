#include "cluster/scaleout/ifs_policy.h"

#include <algorithm>
#include <vector>

namespace nasd::scaleout {

namespace {

constexpr size_t kMaxPath = 4096;
constexpr size_t kMaxComponent = 255;

}  // namespace

const char* policy_source_name(PolicySource s) {
  switch (s) {
    case PolicySource::Directory: return "set on the directory itself";
    case PolicySource::Ancestor: return "inherited from";
    case PolicySource::Volume: return "the volume default";
  }
  return "?";
}

EffectivePolicy effective_policy(const IfsState& state, uint64_t ino,
                                 const ProtectionPolicy& volume_default) {
  EffectivePolicy out;
  out.policy = volume_default;
  auto it = state.inodes.find(ino);
  if (it == state.inodes.end()) return out;
  // A file answers to its directory; a directory to itself first.
  uint64_t at = it->second.attr.type == fs::FileType::Dir ? ino : it->second.parent;
  // Bounded: a parent chain longer than the inode count has a loop (a damaged image).
  for (size_t steps = 0; steps <= state.inodes.size(); ++steps) {
    auto d = state.inodes.find(at);
    if (d == state.inodes.end()) break;
    if (d->second.policy) {
      out.policy = *d->second.policy;
      out.source = at == ino ? PolicySource::Directory : PolicySource::Ancestor;
      out.from = at;
      return out;
    }
    if (at == kIfsRootIno || d->second.parent == at) break;
    at = d->second.parent;
  }
  return out;
}

std::map<uint64_t, ProtectionPolicy> file_policies(const IfsState& state,
                                                   const ProtectionPolicy& volume_default) {
  std::map<uint64_t, ProtectionPolicy> out;
  bool any = false;
  for (const auto& [ino, n] : state.inodes) any = any || n.policy.has_value();
  if (!any) return out;  // the common case: every file under the volume default
  std::map<uint64_t, ProtectionPolicy> per_dir;  // memo: a directory's effective policy
  for (const auto& [ino, n] : state.inodes) {
    if (n.attr.type != fs::FileType::Reg || n.extents.empty()) continue;
    auto memo = per_dir.find(n.parent);
    if (memo == per_dir.end())
      memo = per_dir.emplace(n.parent, effective_policy(state, n.parent, volume_default).policy).first;
    if (!(memo->second == volume_default)) out[ino] = memo->second;
  }
  return out;
}

bool resolve_path(const IfsState& state, std::string_view path, uint64_t* ino, std::string* why) {
  if (path.empty() || path.front() != '/') {
    *why = "a path within the volume starts with / (\"/\" is the volume's root)";
    return false;
  }
  if (path.size() > kMaxPath) {
    *why = "path longer than " + std::to_string(kMaxPath) + " bytes";
    return false;
  }
  uint64_t at = kIfsRootIno;
  size_t pos = 1;
  while (pos < path.size()) {
    size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view name = path.substr(pos, end - pos);
    pos = end + 1;
    if (name.empty()) continue;  // "a//b", a trailing "/"
    if (name == "." || name == ".." || name.size() > kMaxComponent) {
      *why = "bad path component '" + std::string(name.substr(0, 64)) + "'";
      return false;
    }
    const IfsInode& dir = state.inodes.at(at);
    if (dir.attr.type != fs::FileType::Dir) {
      *why = "not a directory on the way: " + std::string(path.substr(0, pos - 1));
      return false;
    }
    auto c = dir.names.find(name);
    if (c == dir.names.end()) {
      *why = "no such file or directory: " + std::string(path.substr(0, end));
      return false;
    }
    at = dir.entries.at(c->second).second;
    if (!state.inodes.count(at)) {
      *why = "dangling entry: " + std::string(path.substr(0, end));
      return false;
    }
  }
  *ino = at;
  return true;
}

std::string path_of(const IfsState& state, uint64_t ino) {
  std::vector<std::string> names;
  uint64_t at = ino;
  for (size_t steps = 0; at != kIfsRootIno; ++steps) {
    auto n = state.inodes.find(at);
    if (n == state.inodes.end() || steps > state.inodes.size()) return "?";
    auto parent = state.inodes.find(n->second.parent);
    if (parent == state.inodes.end()) return "?";
    std::string name;
    for (const auto& [cookie, e] : parent->second.entries) {
      if (e.second == at) {
        name = e.first;
        break;
      }
    }
    if (name.empty()) return "?";
    names.push_back(std::move(name));
    at = n->second.parent;
  }
  std::string out;
  for (auto it = names.rbegin(); it != names.rend(); ++it) out += "/" + *it;
  return out.empty() ? "/" : out;
}

std::string check_honourable(const ProtectionPolicy& policy, const Topology& members) {
  std::string invalid = validate(policy);
  if (!invalid.empty()) return invalid;
  // Units of one group the members can hold: at most b per node, one per drive.
  int slots = 0;
  for (const NodeState& n : members.nodes)
    slots += std::min<int>(policy.per_node, static_cast<int>(n.drives.size()));
  const int need = (policy.data_width > 0 ? policy.data_width : 1) + policy.parity;
  if (slots >= need) return {};
  const int nodes_needed = (need + policy.per_node - 1) / policy.per_node;
  return policy.to_string() + " needs " + std::to_string(need) +
         " units per group at most " + std::to_string(policy.per_node) +
         " per node (at least " + std::to_string(nodes_needed) + " nodes with " +
         std::to_string(policy.per_node) + (policy.per_node == 1 ? " drive" : " drives") +
         " each); this cluster's " +
         std::to_string(members.nodes.size()) + " nodes hold at most " + std::to_string(slots);
}

}  // namespace nasd::scaleout
