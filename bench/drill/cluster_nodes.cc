#include "bench/drill/cluster_nodes.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace nasd::drill {
namespace {

std::optional<uint16_t> parse_port(const std::string& text) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const unsigned long v = std::stoul(text);
  if (v == 0 || v > 65535) return std::nullopt;
  return static_cast<uint16_t>(v);
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

std::optional<Endpoint> parse_endpoint(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  auto port = parse_port(text.substr(colon + 1));
  if (!port) return std::nullopt;
  return Endpoint{text.substr(0, colon), *port};
}

std::optional<std::vector<ClusterNode>> parse_cluster_nodes(std::istream& in, std::string* error) {
  std::vector<ClusterNode> nodes;
  std::set<std::string> names;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    ClusterNode n;
    auto fail = [&](const std::string& why) {
      *error = "cluster.nodes line " + std::to_string(number) + ": " + why;
      return std::nullopt;
    };
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      const size_t eq = word.find('=');
      if (eq == std::string::npos || eq == 0) return fail("'" + word + "' is not key=value");
      n.all[word.substr(0, eq)] = word.substr(eq + 1);
    }
    auto need = [&](const char* key) -> const std::string* {
      auto it = n.all.find(key);
      return it == n.all.end() || it->second.empty() ? nullptr : &it->second;
    };
    for (const char* key : {"name", "address", "nfs_port", "mount_port", "interconnect", "admin", "pid",
                            "config", "data_dir"})
      if (!need(key)) return fail(std::string("no ") + key + "=");
    n.name = *need("name");
    n.address = *need("address");
    auto nfs = parse_port(*need("nfs_port")), mount = parse_port(*need("mount_port"));
    if (!nfs || !mount) return fail("bad nfs_port or mount_port");
    n.nfs_port = *nfs;
    n.mount_port = *mount;
    auto ic = parse_endpoint(*need("interconnect"));
    if (!ic) return fail("interconnect is not host:port");
    n.interconnect = *ic;
    if (need("mirror")) {
      auto m = parse_endpoint(*need("mirror"));
      if (!m) return fail("mirror is not host:port");
      n.mirror = *m;
    }
    n.http = need("http") ? *need("http") : "";
    n.admin = *need("admin");
    n.pid_file = *need("pid");
    n.config = *need("config");
    n.data_dir = *need("data_dir");
    n.evs = need("evs") ? *need("evs") : "";
    // An N+1 standby serves nothing: `volumes=` is there but empty.
    if (!n.all.count("volumes")) return fail("no volumes=");
    if (need("volumes")) n.volumes = split(*need("volumes"), ',');
    if (!names.insert(n.name).second) return fail("node " + n.name + " twice");
    nodes.push_back(std::move(n));
  }
  if (nodes.empty()) {
    *error = "cluster.nodes names no node";
    return std::nullopt;
  }
  return nodes;
}

std::vector<std::vector<std::string>> client_volumes(const std::vector<ClusterNode>& nodes, int per_node) {
  std::vector<size_t> primaries;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!nodes[i].volumes.empty()) primaries.push_back(i);
  std::vector<std::vector<std::string>> out(nodes.size());
  if (primaries.empty()) return out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    // Where this node stands among the primaries (a standby: after the last one).
    size_t at = 0;
    while (at < primaries.size() && primaries[at] < i) ++at;
    for (int k = 0; k < per_node; ++k) {
      const ClusterNode& home = nodes[primaries[(at + k) % primaries.size()]];
      const std::string& v = home.volumes[k % home.volumes.size()];
      // More clients than that pattern has distinct volumes: one client per volume and node.
      if (std::find(out[i].begin(), out[i].end(), v) == out[i].end()) out[i].push_back(v);
    }
  }
  return out;
}

}  // namespace nasd::drill
