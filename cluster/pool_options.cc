#include "cluster/pool_options.h"

#include <arpa/inet.h>

#include <set>

namespace nasd::cluster {
namespace {

constexpr size_t kMaxPoolAddresses = 1024;

bool ipv4(const std::string& s) {
  in_addr a{};
  return inet_pton(AF_INET, s.c_str(), &a) == 1;
}

// "a.b.c.d" or "a.b.c.d-e" (last octet from d to e).
void expand(const std::string& entry, const std::string& where, std::vector<std::string>* out) {
  const size_t dash = entry.find('-');
  if (dash == std::string::npos) {
    if (!ipv4(entry)) throw ConfigError(where + " addresses: '" + entry + "' is not an IPv4 address");
    out->push_back(entry);
    return;
  }
  std::string first = entry.substr(0, dash), last = entry.substr(dash + 1);
  if (last.find('.') != std::string::npos) {  // a.b.c.d-a.b.c.e
    if (last.substr(0, last.rfind('.')) != first.substr(0, first.rfind('.'))) {
      throw ConfigError(where + " addresses: range '" + entry + "' must stay in one /24");
    }
    last = last.substr(last.rfind('.') + 1);
  }
  if (!ipv4(first) || last.empty() || last.size() > 3 ||
      last.find_first_not_of("0123456789") != std::string::npos) {
    throw ConfigError(where + " addresses: '" + entry + "' is not a range a.b.c.d-e");
  }
  const std::string prefix = first.substr(0, first.rfind('.') + 1);
  const int from = std::stoi(first.substr(first.rfind('.') + 1)), to = std::stoi(last);
  if (to < from || to > 255) throw ConfigError(where + " addresses: range '" + entry + "' is empty or past .255");
  for (int i = from; i <= to; ++i) {
    out->push_back(prefix + std::to_string(i));
    if (out->size() > kMaxPoolAddresses) break;
  }
}

}  // namespace

std::vector<PoolOptions> pools_from_config(const Config& config, const ClusterOptions& cluster) {
  std::vector<PoolOptions> pools;
  std::set<std::string> taken;
  for (const EvsOptions& e : cluster.evs) taken.insert(e.listen);
  std::set<std::string> seen;
  for (const ConfigSection* s : config.sections("pool")) {
    const std::string where = "[pool " + s->name() + "]";
    if (!cluster.n_node()) throw ConfigError(where + ": pools need an N-node cluster ([member] sections)");
    if (auto unknown = s->unknown_keys({"addresses", "nfs_port", "mount_port", "nodes", "interface", "prefix"}); !unknown.empty())
      throw ConfigError(where + " unknown key '" + unknown[0] + "'");
    PoolOptions p;
    p.name = s->name();
    for (const std::string& entry : s->get_list("addresses")) expand(entry, where, &p.addresses);
    if (p.addresses.empty()) throw ConfigError(where + ": addresses are required");
    if (p.addresses.size() > kMaxPoolAddresses)
      throw ConfigError(where + ": more than " + std::to_string(kMaxPoolAddresses) + " addresses");
    for (const std::string& a : p.addresses) {
      if (taken.count(a)) throw ConfigError(where + ": " + a + " is an [evs] address");
      if (!seen.insert(a).second) throw ConfigError(where + ": address " + a + " given twice");
    }
    const int64_t nfs = s->get_int("nfs_port", 2049), mount = s->get_int("mount_port", 20048);
    if (nfs < 1 || nfs > 65535 || mount < 1 || mount > 65535)
      throw ConfigError(where + ": nfs_port and mount_port are 1 to 65535");
    p.nfs_port = static_cast<uint16_t>(nfs);
    p.mount_port = static_cast<uint16_t>(mount);
    p.nodes = s->get_list("nodes");
    if (p.nodes.empty()) {
      for (const MemberOptions& m : cluster.members)
        if (!m.standby && !m.storage) p.nodes.push_back(m.name);
    }
    std::set<std::string> once;
    for (const std::string& n : p.nodes) {
      const MemberOptions* m = cluster.member(n);
      if (!m || m->standby || m->storage) throw ConfigError(where + " nodes: " + n + " is no primary [member]");
      if (!once.insert(n).second) throw ConfigError(where + " nodes: " + n + " given twice");
    }
    if (s->has("interface") != s->has("prefix"))
      throw ConfigError(where + ": interface and prefix go together (the addresses' subnet length)");
    if (s->has("interface")) {
      const int64_t prefix = s->get_int("prefix", 0);
      for (const std::string& a : p.addresses) {
        address::InterfaceAddress on;
        std::string error;
        if (!address::make_interface_address(a, static_cast<int>(prefix < 0 || prefix > 128 ? 0 : prefix),
                                             s->get("interface"), &on, &error))
          throw ConfigError(where + ": " + error);
        p.on_interface.push_back(on);
      }
    }
    pools.push_back(std::move(p));
  }
  return pools;
}

}  // namespace nasd::cluster
