#include "cluster/membership/placement.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>

namespace nasd::membership {
namespace {

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > kMaxPlacementName || s == "-") return false;
  for (unsigned char c : s)
    if (c <= ' ' || c == 0x7f) return false;
  return true;
}

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

bool parse_u32(const std::string& s, uint32_t* out) {
  if (s.empty() || s.size() > 10) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && (s == "0" || s[0] != '0');
}

// The invariants every stored record keeps; "" when it does.
std::string check(const Placement& p) {
  for (const auto& [name, e] : p.evs) {
    if (!valid_name(name) || !valid_name(e.node)) return "bad evs entry";
    if (!e.target.empty() && (!valid_name(e.target) || e.target == e.node))
      return "evs " + name + ": bad move target";
  }
  for (const auto& [id, v] : p.volumes) {
    const std::string what = "volume " + std::to_string(id);
    auto evs = p.evs.find(v.evs);
    if (evs == p.evs.end()) return what + " is in an unknown evs";
    if (!v.target_evs.empty()) {
      auto t = p.evs.find(v.target_evs);
      if (t == p.evs.end() || v.target_evs == v.evs) return what + ": bad move target";
      if (!evs->second.target.empty() || !t->second.target.empty())
        return what + " moves between evs that move themselves";
    }
    if (v.handed && v.target_evs.empty() && evs->second.target.empty())
      return what + " is handed over but not moving";
  }
  return "";
}

}  // namespace

std::string Placement::designated(uint32_t volume) const {
  auto v = volumes.find(volume);
  if (v == volumes.end()) return "";
  auto e = evs.find(v->second.evs);
  return e == evs.end() ? "" : e->second.node;
}

bool Placement::moving(uint32_t volume) const { return !destination(volume).empty(); }

std::string Placement::destination(uint32_t volume) const {
  auto v = volumes.find(volume);
  if (v == volumes.end()) return "";
  if (!v->second.target_evs.empty()) {
    auto t = evs.find(v->second.target_evs);
    return t == evs.end() ? "" : t->second.node;
  }
  auto e = evs.find(v->second.evs);
  return e == evs.end() ? "" : e->second.target;
}

bool Placement::handed(uint32_t volume) const {
  auto v = volumes.find(volume);
  return v != volumes.end() && v->second.handed;
}

std::vector<uint32_t> Placement::volumes_of(const std::string& name) const {
  std::vector<uint32_t> out;
  for (const auto& [id, v] : volumes)
    if (v.evs == name) out.push_back(id);
  return out;
}

std::vector<uint32_t> Placement::unit(uint32_t volume) const {
  auto v = volumes.find(volume);
  if (v == volumes.end()) return {};
  if (!v->second.target_evs.empty()) return {volume};
  return volumes_of(v->second.evs);
}

std::vector<std::string> Placement::pending_moves() const {
  std::vector<std::string> out;
  for (const auto& [name, e] : evs) {
    if (e.target.empty()) continue;
    auto vols = volumes_of(name);
    size_t handed_count = 0;
    for (uint32_t id : vols) handed_count += volumes.at(id).handed ? 1 : 0;
    out.push_back("evs " + name + " " + e.node + " -> " + e.target + " (" +
                  std::to_string(handed_count) + " of " + std::to_string(vols.size()) +
                  " volumes handed over)");
  }
  for (const auto& [id, v] : volumes)
    if (!v.target_evs.empty())
      out.push_back("volume " + std::to_string(id) + " " + v.evs + " -> " + v.target_evs +
                    (v.handed ? " (handed over)" : " (being handed over)"));
  return out;
}

bool Placement::operator==(const Placement& o) const {
  if (version != o.version || evs.size() != o.evs.size() || volumes.size() != o.volumes.size())
    return false;
  for (const auto& [n, e] : evs) {
    auto it = o.evs.find(n);
    if (it == o.evs.end() || it->second.node != e.node || it->second.target != e.target) return false;
  }
  for (const auto& [id, v] : volumes) {
    auto it = o.volumes.find(id);
    if (it == o.volumes.end() || it->second.evs != v.evs || it->second.target_evs != v.target_evs ||
        it->second.handed != v.handed)
      return false;
  }
  if (stale_mirrors.size() != o.stale_mirrors.size()) return false;
  for (const auto& [n, m] : stale_mirrors) {
    auto it = o.stale_mirrors.find(n);
    if (it == o.stale_mirrors.end() || it->second.partner != m.partner ||
        it->second.since != m.since)
      return false;
  }
  return true;
}

Placement initial_placement(const std::map<std::string, std::string>& evs_node,
                            const std::map<uint32_t, std::string>& volume_evs) {
  Placement p;
  for (const auto& [name, node] : evs_node) p.evs[name].node = node;
  for (const auto& [id, evs] : volume_evs) p.volumes[id].evs = evs;
  return p;
}

Placement reconcile(const Placement& stored, const Placement& from_config) {
  Placement out;
  out.version = stored.version;
  // Marks are kept whatever the config says: dropping one could let a stale copy be replayed.
  out.stale_mirrors = stored.stale_mirrors;
  for (const auto& [name, e] : from_config.evs) {
    auto it = stored.evs.find(name);
    out.evs[name] = it != stored.evs.end() ? it->second : e;
  }
  for (const auto& [id, v] : from_config.volumes) {
    auto it = stored.volumes.find(id);
    out.volumes[id] = it != stored.volumes.end() && out.evs.count(it->second.evs) ? it->second : v;
    Placement::Volume& mine = out.volumes[id];
    if (!mine.target_evs.empty() && !out.evs.count(mine.target_evs)) {
      mine.target_evs.clear();
      mine.handed = false;
    }
  }
  // A pending move whose pieces the config lost is dropped rather than left half valid.
  if (!check(out).empty()) {
    for (auto& [name, e] : out.evs) e.target.clear();
    for (auto& [id, v] : out.volumes) {
      v.target_evs.clear();
      v.handed = false;
    }
  }
  return out;
}

std::string propose_evs_move(Placement& p, const std::string& evs, const std::string& node,
                             const std::vector<std::string>& nodes) {
  auto e = p.evs.find(evs);
  if (e == p.evs.end()) return "no evs named " + evs;
  if (std::find(nodes.begin(), nodes.end(), node) == nodes.end())
    return "no member named " + node;
  if (!e->second.target.empty())
    return "evs " + evs + " is already moving to " + e->second.target;
  for (const auto& [id, v] : p.volumes)
    if ((v.evs == evs && !v.target_evs.empty()) || v.target_evs == evs)
      return "volume " + std::to_string(id) + " is moving into or out of evs " + evs;
  if (e->second.node == node) return "evs " + evs + " is already on " + node;
  if (p.volumes_of(evs).empty())
    e->second.node = node;  // nothing to hand over
  else
    e->second.target = node;
  return "";
}

std::string propose_volume_move(Placement& p, uint32_t volume, const std::string& evs) {
  auto v = p.volumes.find(volume);
  if (v == p.volumes.end()) return "no volume with id " + std::to_string(volume);
  auto t = p.evs.find(evs);
  if (t == p.evs.end()) return "no evs named " + evs;
  if (!v->second.target_evs.empty())
    return "volume " + std::to_string(volume) + " is already moving to " + v->second.target_evs;
  if (v->second.evs == evs) return "volume " + std::to_string(volume) + " is already in " + evs;
  if (!p.evs.at(v->second.evs).target.empty())
    return "its evs " + v->second.evs + " is moving; wait for that move";
  if (!t->second.target.empty()) return "evs " + evs + " is moving; wait for that move";
  v->second.target_evs = evs;
  return "";
}

std::string mark_handed(Placement& p, uint32_t volume) {
  auto v = p.volumes.find(volume);
  if (v == p.volumes.end()) return "no volume with id " + std::to_string(volume);
  if (!p.moving(volume)) return "volume " + std::to_string(volume) + " is not moving";
  v->second.handed = true;
  const std::vector<uint32_t> unit = p.unit(volume);
  for (uint32_t id : unit)
    if (!p.volumes.at(id).handed) return "";
  // The whole unit is clean: commit.
  if (!v->second.target_evs.empty()) {
    v->second.evs = v->second.target_evs;
    v->second.target_evs.clear();
  } else {
    Placement::Evs& e = p.evs.at(v->second.evs);
    e.node = e.target;
    e.target.clear();
  }
  for (uint32_t id : unit) p.volumes.at(id).handed = false;
  return "";
}

std::string cancel_evs_move(Placement& p, const std::string& evs) {
  auto e = p.evs.find(evs);
  if (e == p.evs.end()) return "no evs named " + evs;
  if (e->second.target.empty()) return "evs " + evs + " is not moving";
  e->second.target.clear();
  for (uint32_t id : p.volumes_of(evs)) p.volumes.at(id).handed = false;
  return "";
}

std::string cancel_volume_move(Placement& p, uint32_t volume) {
  auto v = p.volumes.find(volume);
  if (v == p.volumes.end()) return "no volume with id " + std::to_string(volume);
  if (v->second.target_evs.empty()) return "volume " + std::to_string(volume) + " is not moving";
  v->second.target_evs.clear();
  v->second.handed = false;
  return "";
}

std::string mark_mirror_stale(Placement& p, const std::string& node, const std::string& partner,
                              uint64_t since) {
  if (!valid_name(node) || !valid_name(partner) || node == partner) return "bad stale-mirror mark";
  auto it = p.stale_mirrors.find(node);
  if (it != p.stale_mirrors.end()) {
    // Already marked: the earliest position stands (the copy lacks everything from there on).
    it->second.partner = partner;
    return "";
  }
  if (p.stale_mirrors.size() >= kMaxPlacementStaleMirrors) return "too many stale-mirror marks";
  p.stale_mirrors[node] = Placement::StaleMirror{partner, since};
  return "";
}

std::string clear_mirror_stale(Placement& p, const std::string& node) {
  p.stale_mirrors.erase(node);
  return "";
}

std::string encode_placement(const Placement& p) {
  std::string out = "nasd-placement 1\n";
  for (const auto& [name, e] : p.evs)
    out += "evs " + name + " " + e.node + " " + (e.target.empty() ? "-" : e.target) + "\n";
  for (const auto& [id, v] : p.volumes)
    out += "volume " + std::to_string(id) + " " + v.evs + " " +
           (v.target_evs.empty() ? "-" : v.target_evs) + (v.handed ? " handed\n" : " -\n");
  for (const auto& [node, m] : p.stale_mirrors)
    out += "stale-mirror " + node + " " + m.partner + " " + std::to_string(m.since) + "\n";
  return out;
}

bool decode_placement(const std::string& text, Placement* out, std::string* error) {
  const auto fail = [error](std::string why) {
    *error = "placement record: " + std::move(why);
    return false;
  };
  if (text.size() > kMaxPlacementBytes) return fail("too large");
  Placement p;
  std::istringstream in(text);
  std::string line;
  bool header = false;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> w = split_words(line);
    if (!header) {
      if (w.size() != 2 || w[0] != "nasd-placement" || w[1] != "1") return fail("unknown format");
      header = true;
      continue;
    }
    if (w.size() == 4 && w[0] == "evs") {
      if (!valid_name(w[1]) || !valid_name(w[2]) || (w[3] != "-" && !valid_name(w[3])))
        return fail("bad evs line");
      if (p.evs.size() >= kMaxPlacementEvs) return fail("too many evs");
      if (!p.evs.emplace(w[1], Placement::Evs{w[2], w[3] == "-" ? "" : w[3]}).second)
        return fail("evs " + w[1] + " twice");
    } else if (w.size() == 5 && w[0] == "volume") {
      uint32_t id = 0;
      if (!parse_u32(w[1], &id) || !valid_name(w[2]) || (w[3] != "-" && !valid_name(w[3])) ||
          (w[4] != "-" && w[4] != "handed"))
        return fail("bad volume line");
      if (p.volumes.size() >= kMaxPlacementVolumes) return fail("too many volumes");
      Placement::Volume v{w[2], w[3] == "-" ? "" : w[3], w[4] == "handed"};
      if (!p.volumes.emplace(id, std::move(v)).second) return fail("volume " + w[1] + " twice");
    } else if (w.size() == 4 && w[0] == "stale-mirror") {
      uint64_t since = 0;
      auto [end, ec] = std::from_chars(w[3].data(), w[3].data() + w[3].size(), since);
      if (!valid_name(w[1]) || !valid_name(w[2]) || w[1] == w[2] || w[3].size() > 20 ||
          ec != std::errc() || end != w[3].data() + w[3].size())
        return fail("bad stale-mirror line");
      if (p.stale_mirrors.size() >= kMaxPlacementStaleMirrors) return fail("too many stale-mirror marks");
      if (!p.stale_mirrors.emplace(w[1], Placement::StaleMirror{w[2], since}).second)
        return fail("stale-mirror " + w[1] + " twice");
    } else {
      return fail("unknown line");
    }
  }
  if (!header) return fail("empty");
  std::string problem = check(p);
  if (!problem.empty()) return fail(problem);
  *out = std::move(p);
  return true;
}

}  // namespace nasd::membership
