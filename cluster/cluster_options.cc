#include "cluster/cluster_options.h"

#include <set>

namespace nasd::cluster {

void parse_host_port(const std::string& text, const std::string& what, std::string* host,
                     uint16_t* port) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw ConfigError(what + ": expected host:port, got '" + text + "'");
  *host = text.substr(0, colon);
  size_t used = 0;
  unsigned long p = 0;
  try {
    p = std::stoul(text.substr(colon + 1), &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != text.size() - colon - 1 || p == 0 || p > 65535)
    throw ConfigError(what + ": bad port in '" + text + "'");
  *port = static_cast<uint16_t>(p);
}

std::optional<ClusterOptions> ClusterOptions::from_config(const Config& config) {
  const ConfigSection* c = config.section("cluster");
  if (!c) return std::nullopt;
  if (auto unknown = c->unknown_keys({"name", "interconnect"}); !unknown.empty())
    throw ConfigError("[cluster] unknown key '" + unknown[0] + "'");
  ClusterOptions o;
  o.name = c->get("name");
  if (o.name.empty()) throw ConfigError("[cluster] name is required");
  parse_host_port(c->get("interconnect"), "[cluster] interconnect", &o.host, &o.port);

  std::set<std::string> claimed;
  for (const ConfigSection* s : config.sections("peer")) {
    std::string where = "[peer " + s->name() + "]";
    if (auto unknown = s->unknown_keys({"interconnect", "volumes"}); !unknown.empty())
      throw ConfigError(where + " unknown key '" + unknown[0] + "'");
    PeerOptions p;
    p.name = s->name();
    if (p.name.empty()) throw ConfigError("[peer] needs a node name: [peer NAME]");
    parse_host_port(s->get("interconnect"), where + " interconnect", &p.host, &p.port);
    p.volumes = s->get_list("volumes");
    if (p.volumes.empty()) throw ConfigError(where + ": volumes is required");
    for (const auto& v : p.volumes) {
      if (!config.section("volume", v)) throw ConfigError(where + ": no [volume " + v + "]");
      if (!claimed.insert(v).second) throw ConfigError(where + ": volume " + v + " claimed twice");
    }
    o.peers.push_back(std::move(p));
  }
  return o;
}

const PeerOptions* ClusterOptions::owner_of(const std::string& volume) const {
  for (const auto& p : peers)
    for (const auto& v : p.volumes)
      if (v == volume) return &p;
  return nullptr;
}

}  // namespace nasd::cluster
