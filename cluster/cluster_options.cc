#include "cluster/cluster_options.h"

#include <arpa/inet.h>

#include <filesystem>
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

AddressList AddressList::parse(const std::vector<std::string>& entries, const std::string& what) {
  AddressList list;
  for (const std::string& e : entries) {
    auto slash = e.find('/');
    std::string addr = e.substr(0, slash);
    int bits = 32;
    if (slash != std::string::npos) {
      const std::string len = e.substr(slash + 1);
      bits = len.empty() || len.size() > 2 || len.find_first_not_of("0123456789") != std::string::npos
                 ? -1
                 : std::stoi(len);
    }
    in_addr a{};
    if (bits < 0 || bits > 32 || inet_pton(AF_INET, addr.c_str(), &a) != 1)
      throw ConfigError(what + ": '" + e + "' is not an IPv4 address or a.b.c.d/len network");
    const uint32_t mask = bits == 0 ? 0 : ~uint32_t(0) << (32 - bits);
    list.nets_.emplace_back(ntohl(a.s_addr) & mask, mask);
  }
  return list;
}

bool AddressList::allows(const std::string& ipv4) const {
  if (nets_.empty()) return true;
  in_addr a{};
  if (inet_pton(AF_INET, ipv4.c_str(), &a) != 1) return false;
  const uint32_t host = ntohl(a.s_addr);
  for (const auto& [net, mask] : nets_) {
    if ((host & mask) == net) return true;
  }
  return false;
}

bool AddressList::add_address(const std::string& ipv4) {
  in_addr a{};
  if (inet_pton(AF_INET, ipv4.c_str(), &a) != 1 || a.s_addr == 0) return false;
  nets_.emplace_back(ntohl(a.s_addr), ~uint32_t(0));
  return true;
}

std::optional<ClusterOptions> ClusterOptions::from_config(const Config& config) {
  const ConfigSection* c = config.section("cluster");
  if (!c) return std::nullopt;
  if (auto unknown = c->unknown_keys({"name", "interconnect", "shared_dir", "mirror_listen",
                                      "failback", "heartbeat_ms", "missed_heartbeats",
                                      "lease_ms", "startup_grace_ms", "key", "allowed_peers",
                                      "forward_timeout_ms", "forward_slots", "authority",
                                      "etcd_endpoints", "etcd_prefix", "etcd_ca", "etcd_cert",
                                      "etcd_key", "etcd_timeout_ms", "etcd_allow_insecure",
                                      "etcd_user", "etcd_password_file"});
      !unknown.empty())
    throw ConfigError("[cluster] unknown key '" + unknown[0] + "'");
  ClusterOptions o;
  o.name = c->get("name");
  if (o.name.empty()) throw ConfigError("[cluster] name is required");
  o.authority = authority_from_config(config, *c, o.name);
  if (!config.sections("member").empty()) {
    const ConfigSection* node = config.section("node");
    o.members_from_config(config, node ? node->get("name", "node0") : "node0");
  } else {
    parse_host_port(c->get("interconnect"), "[cluster] interconnect", &o.host, &o.port);
  }
  o.authority.etcd.source_address = o.host;  // etcd calls leave from the node's own address
  const int64_t forward_ms = c->get_int("forward_timeout_ms", 5000);
  if (forward_ms < 100 || forward_ms > 600000)
    throw ConfigError("[cluster] forward_timeout_ms out of range (100..600000)");
  o.forward_timeout = std::chrono::milliseconds(forward_ms);
  const int64_t slots = c->get_int("forward_slots", 256);
  if (slots < 1 || slots > 4096) throw ConfigError("[cluster] forward_slots out of range (1..4096)");
  o.forward_slots = static_cast<size_t>(slots);
  if (c->has("key"))
    o.key_file =
        std::filesystem::absolute(config.resolve_path(c->get("key"))).lexically_normal().string();
  o.allowed_peers = AddressList::parse(c->get_list("allowed_peers"), "[cluster] allowed_peers");

  std::set<std::string> claimed;
  if (o.n_node() && !config.sections("peer").empty())
    throw ConfigError("[peer] and [member] sections do not mix: describe every node as a [member]");
  for (const ConfigSection* s : config.sections("peer")) {
    std::string where = "[peer " + s->name() + "]";
    if (auto unknown = s->unknown_keys(
            {"interconnect", "volumes", "mirror", "listen", "nfs_port", "mount_port"});
        !unknown.empty())
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
    p.mirror = s->get("mirror");
    o.peers.push_back(std::move(p));
  }
  if (c->has("shared_dir")) o.failover = failover_from_config(config, *c);
  if (o.failover) o.authority.lease_dir = o.failover->shared_dir + "/leases";
  const ConfigSection* node = config.section("node");
  const std::string self_name = node ? node->get("name", "node0") : "node0";
  if (o.failover && !o.n_node()) o.pair_as_members(config, self_name);
  if (o.failover) {
    const MemberOptions* self = o.member(self_name);
    o.failover->mirror_host = self->mirror_host;
    o.failover->mirror_port = self->mirror_port;
  }
  if (!c->has("allowed_peers")) o.default_allowed_peers();
  return o;
}

// Interconnect and mirror links leave from their node's interconnect address (util/net.h
// connect_tcp): those addresses are the cluster's, and nobody else needs a handshake slot.
void ClusterOptions::default_allowed_peers() {
  std::vector<std::string> hosts{host};
  for (const PeerOptions& p : peers) hosts.push_back(p.host);
  for (const MemberOptions& m : members) hosts.push_back(m.host);
  AddressList list;
  for (const std::string& h : hosts) {
    if (!list.add_address(h)) {
      allowed_peers_open = "a node's interconnect address '" + h +
                           "' is not one IPv4 address, so [cluster] allowed_peers has no default: any "
                           "address may try the link handshake; set allowed_peers";
      return;
    }
  }
  allowed_peers = std::move(list);
  allowed_peers_default = true;
}

void ClusterOptions::pair_as_members(const Config& config, const std::string& self) {
  if (peers.size() != 1)
    throw ConfigError("[cluster] shared_dir (failover) needs exactly one [peer]: the partner");
  const ConfigSection& c = *config.section("cluster");
  const PeerOptions& partner = peers.front();
  const ConfigSection& ps = *config.section("peer", partner.name);
  const std::string where = "[peer " + partner.name + "]";
  if (partner.name == self) throw ConfigError(where + " is this node's own name");
  MemberOptions me, them;
  me.name = self;
  me.host = host;
  me.port = port;
  parse_host_port(c.get("mirror_listen"), "[cluster] mirror_listen", &me.mirror_host,
                  &me.mirror_port);
  them.name = partner.name;
  them.host = partner.host;
  them.port = partner.port;
  parse_host_port(partner.mirror, where + " mirror", &them.mirror_host, &them.mirror_port);
  me.mirror_to = them.name;
  me.covers = {them.name};
  me.mirror_target = partner.mirror;
  them.mirror_to = me.name;
  them.covers = {me.name};
  them.mirror_target = c.get("mirror_listen");

  // Each node's virtual server: the partner's from its [peer], this node's own address.
  EvsOptions their_evs;
  their_evs.name = their_evs.node = them.name;
  their_evs.listen = ps.get("listen");
  their_evs.nfs_port = static_cast<uint16_t>(ps.get_int("nfs_port", 0));
  their_evs.mount_port = static_cast<uint16_t>(ps.get_int("mount_port", 0));
  their_evs.volumes = partner.volumes;
  their_evs.is_node_address = true;
  if (their_evs.listen.empty() || their_evs.nfs_port == 0 || their_evs.mount_port == 0)
    throw ConfigError(where + ": listen, nfs_port and mount_port (its virtual server) are "
                      "required for failover");
  EvsOptions my_evs;
  my_evs.name = my_evs.node = me.name;
  const ConfigSection* node = config.section("node");
  my_evs.listen = node ? node->get("listen", "127.0.0.1") : "127.0.0.1";
  my_evs.nfs_port = static_cast<uint16_t>(node ? node->get_int("nfs_port", 2049) : 2049);
  my_evs.mount_port = static_cast<uint16_t>(node ? node->get_int("mount_port", 20048) : 20048);
  my_evs.is_node_address = true;
  for (const ConfigSection* v : config.sections("volume"))
    if (!owner_of(v->name())) my_evs.volumes.push_back(v->name());
  // Both nodes list the members and EVSes in the same order (by name).
  const bool me_first = me.name < them.name;
  members.push_back(me_first ? me : them);
  members.push_back(me_first ? them : me);
  evs.push_back(me_first ? my_evs : their_evs);
  evs.push_back(me_first ? their_evs : my_evs);
}

membership::AuthorityOptions ClusterOptions::authority_from_config(const Config& config,
                                                                   const ConfigSection& c,
                                                                   const std::string& name) {
  membership::AuthorityOptions a;
  const std::string kind = c.get("authority", "file");
  if (kind == "etcd") {
    a.kind = membership::AuthorityOptions::Kind::Etcd;
  } else if (kind != "file") {
    throw ConfigError("[cluster] authority = " + kind + ": expected file or etcd");
  }
  const bool etcd = a.kind == membership::AuthorityOptions::Kind::Etcd;
  for (const char* key : {"etcd_endpoints", "etcd_prefix", "etcd_ca", "etcd_cert", "etcd_key",
                          "etcd_timeout_ms", "etcd_allow_insecure", "etcd_user",
                          "etcd_password_file"}) {
    if (!etcd && c.has(key))
      throw ConfigError(std::string("[cluster] ") + key + " needs authority = etcd");
  }
  if (!etcd) return a;
  membership::EtcdOptions& e = a.etcd;
  e.endpoints = c.get_list("etcd_endpoints");
  if (e.endpoints.empty())
    throw ConfigError("[cluster] authority = etcd needs etcd_endpoints (http(s)://host:port, ...)");
  for (const std::string& url : e.endpoints) {
    const bool tls = url.rfind("https://", 0) == 0;
    if (!tls && url.rfind("http://", 0) != 0)
      throw ConfigError("[cluster] etcd_endpoints: '" + url + "' is not an http:// or https:// URL");
    if (url.find_first_of(" \t\r\n") != std::string::npos || url.size() > 200)
      throw ConfigError("[cluster] etcd_endpoints: bad URL '" + url + "'");
    // Plain HTTP leaves the leases and the placement (who serves what) open to anyone on the
    // path between the node and etcd; only this host's loopback is spared.
    if (!tls && !url_host_is_loopback(url) && !c.get_bool("etcd_allow_insecure", false))
      throw ConfigError("[cluster] etcd_endpoints: '" + url + "' is plain HTTP to another host: "
                        "use https:// (etcd_ca, etcd_cert, etcd_key), or set etcd_allow_insecure = "
                        "true on a network only the nodes and etcd share");
  }
  e.prefix = c.get("etcd_prefix", "/nasd/" + name + "/");
  if (e.prefix.empty() || e.prefix.size() > 200)
    throw ConfigError("[cluster] etcd_prefix must have 1 to 200 bytes");
  const auto path = [&](const char* key) {
    return c.has(key) ? std::filesystem::absolute(config.resolve_path(c.get(key)))
                            .lexically_normal()
                            .string()
                      : std::string();
  };
  e.ca_file = path("etcd_ca");
  e.cert_file = path("etcd_cert");
  e.key_file = path("etcd_key");
  if (e.cert_file.empty() != e.key_file.empty())
    throw ConfigError("[cluster] etcd_cert and etcd_key go together");
  e.user = c.get("etcd_user", "");
  e.password_file = path("etcd_password_file");
  if (e.user.empty() != e.password_file.empty())
    throw ConfigError("[cluster] etcd_user and etcd_password_file go together");
  if (e.user.size() > 128 || e.user.find_first_of(" \t\r\n\"\\") != std::string::npos)
    throw ConfigError("[cluster] etcd_user: a user name of at most 128 bytes, no spaces or quotes");
  const int64_t timeout = c.get_int("etcd_timeout_ms", 1500);
  if (timeout < 100 || timeout > 60000)
    throw ConfigError("[cluster] etcd_timeout_ms out of range (100..60000)");
  e.timeout = std::chrono::milliseconds(timeout);
  return a;
}

// "http://127.0.0.1:2379", "http://localhost:2379/", "http://[::1]:2379": true.
bool url_host_is_loopback(const std::string& url) {
  std::string rest = url.substr(url.find("://") + 3);
  rest = rest.substr(0, rest.find('/'));
  std::string host;
  if (!rest.empty() && rest.front() == '[') {
    host = rest.substr(1, rest.find(']') - 1);
    return host == "::1";
  }
  host = rest.substr(0, rest.find(':'));
  if (host == "localhost") return true;
  in_addr a{};
  return inet_pton(AF_INET, host.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

void ClusterOptions::members_from_config(const Config& config, const std::string& self) {
  if (config.section("cluster")->has("interconnect") || config.section("cluster")->has("mirror_listen"))
    throw ConfigError("[cluster] interconnect and mirror_listen belong in each [member] when "
                      "the cluster is described by [member] sections");
  for (const ConfigSection* s : config.sections("member")) {
    const std::string where = "[member " + s->name() + "]";
    if (auto unknown = s->unknown_keys({"interconnect", "mirror_listen", "mirror_to", "role"});
        !unknown.empty())
      throw ConfigError(where + " unknown key '" + unknown[0] + "'");
    if (s->name().empty()) throw ConfigError("[member] needs a node name: [member NAME]");
    if (member(s->name())) throw ConfigError(where + " appears twice");
    MemberOptions m;
    m.name = s->name();
    parse_host_port(s->get("interconnect"), where + " interconnect", &m.host, &m.port);
    if (s->has("mirror_listen"))
      parse_host_port(s->get("mirror_listen"), where + " mirror_listen", &m.mirror_host,
                      &m.mirror_port);
    m.mirror_to = s->get("mirror_to");
    const std::string role = s->get("role", "primary");
    if (role != "primary" && role != "standby" && role != "storage")
      throw ConfigError(where + " role = " + role + ": expected primary, standby or storage");
    m.standby = role == "standby";
    m.storage = role == "storage";
    members.push_back(std::move(m));
  }
  if (members.size() < 2 || members.size() > 8)
    throw ConfigError("a cluster has 2 to 8 [member]s, not " + std::to_string(members.size()));
  const MemberOptions* me = member(self);
  if (!me) throw ConfigError("[node] name = " + self + " is not one of the [member]s");
  host = me->host;
  port = me->port;
  // Default mirrors: every primary to the standby if there is one, else a ring of primaries.
  std::vector<MemberOptions*> primaries;
  const MemberOptions* standby = nullptr;
  for (MemberOptions& m : members) {
    if (m.storage) continue;  // in no ring: it mirrors nothing and covers nobody
    if (m.standby) {
      if (standby) throw ConfigError("one standby [member] at most");
      standby = &m;
    } else {
      primaries.push_back(&m);
    }
  }
  if (primaries.empty()) throw ConfigError("a cluster needs a primary [member]");
  for (size_t i = 0; i < primaries.size(); ++i) {
    MemberOptions& m = *primaries[i];
    if (m.mirror_to.empty())
      m.mirror_to = standby ? standby->name : primaries[(i + 1) % primaries.size()]->name;
    if (m.mirror_to == m.name) throw ConfigError("[member " + m.name + "] mirror_to names itself");
    MemberOptions* holder = nullptr;
    for (MemberOptions& h : members)
      if (h.name == m.mirror_to) holder = &h;
    if (!holder)
      throw ConfigError("[member " + m.name + "] mirror_to = " + m.mirror_to + ": no such member");
    holder->covers.push_back(m.name);
  }
  for (MemberOptions& m : members) {
    if (!m.standby || m.mirror_to.empty()) continue;
    throw ConfigError("[member " + m.name + "] a standby has no journal to mirror (no mirror_to)");
  }
  for (MemberOptions& m : members) {
    if (!m.storage) continue;
    if (!m.mirror_to.empty())
      throw ConfigError("[member " + m.name + "] a storage node has no journal to mirror (no mirror_to)");
    for (const MemberOptions& p : members)
      if (p.mirror_to == m.name)
        throw ConfigError("[member " + p.name + "] mirror_to = " + m.name + ": a storage node holds no mirror");
  }
  for (MemberOptions& m : members) {
    if (m.mirror_to.empty()) continue;
    const MemberOptions& holder = *member(m.mirror_to);
    if (holder.mirror_host.empty())
      throw ConfigError("[member " + holder.name + "] mirror_listen is required: it holds " +
                        m.name + "'s mirror");
    size_t k = 0;
    while (holder.covers[k] != m.name) ++k;
    m.mirror_target = holder.mirror_host + ":" + std::to_string(holder.mirror_port + k);
  }

  std::set<std::string> claimed;
  for (const ConfigSection* s : config.sections("evs")) {
    const std::string where = "[evs " + s->name() + "]";
    if (auto unknown = s->unknown_keys({"node", "listen", "address", "interface", "nfs_port",
                                        "mount_port", "volumes"});
        !unknown.empty())
      throw ConfigError(where + " unknown key '" + unknown[0] + "'");
    EvsOptions e;
    e.name = s->name();
    e.node = s->get("node");
    const MemberOptions* home = member(e.node);
    if (!home) throw ConfigError(where + " node = " + e.node + ": no such [member]");
    if (home->standby) throw ConfigError(where + ": a standby serves no virtual server");
    if (home->storage) throw ConfigError(where + ": a storage node serves no virtual server");
    e.listen = s->get("listen");
    if (s->has("address") || s->has("interface")) {
      if (s->has("listen"))
        throw ConfigError(where + ": listen or address (with interface), not both");
      if (!s->has("address") || !s->has("interface"))
        throw ConfigError(where + ": address = a.b.c.d/len and interface = NAME go together");
      address::InterfaceAddress a;
      std::string error;
      if (!address::parse_interface_address(s->get("address"), s->get("interface"), &a, &error))
        throw ConfigError(where + " address: " + error);
      e.listen = a.address;
      e.on_interface = a;
    }
    e.nfs_port = static_cast<uint16_t>(s->get_int("nfs_port", 2049));
    e.mount_port = static_cast<uint16_t>(s->get_int("mount_port", 20048));
    if (e.listen.empty())
      throw ConfigError(where + ": listen (an address on the host) or address and interface is required");
    e.volumes = s->get_list("volumes");
    for (const auto& v : e.volumes) {
      if (!config.section("volume", v)) throw ConfigError(where + ": no [volume " + v + "]");
      if (!claimed.insert(v).second) throw ConfigError(where + ": volume " + v + " claimed twice");
    }
    evs.push_back(std::move(e));
  }
  for (const ConfigSection* v : config.sections("volume"))
    if (!claimed.count(v->name()))
      throw ConfigError("[volume " + v->name() + "] is served by no [evs]");
  // Every other member is a peer: its interconnect and the volumes of its EVSes.
  for (const MemberOptions& m : members) {
    if (m.name == self) continue;
    PeerOptions p;
    p.name = m.name;
    p.host = m.host;
    p.port = m.port;
    for (const EvsOptions& e : evs)
      if (e.node == m.name) p.volumes.insert(p.volumes.end(), e.volumes.begin(), e.volumes.end());
    p.mirror = m.mirror_target;
    peers.push_back(std::move(p));
  }
}

const MemberOptions* ClusterOptions::member(const std::string& name) const {
  for (const MemberOptions& m : members)
    if (m.name == name) return &m;
  return nullptr;
}

const EvsOptions* ClusterOptions::evs_of_volume(const std::string& volume) const {
  for (const EvsOptions& e : evs)
    for (const std::string& v : e.volumes)
      if (v == volume) return &e;
  return nullptr;
}

FailoverOptions ClusterOptions::failover_from_config(const Config& config, const ConfigSection& c) {
  FailoverOptions f;
  f.shared_dir = std::filesystem::absolute(config.resolve_path(c.get("shared_dir")))
                     .lexically_normal()
                     .string();
  std::string failback = c.get("failback", "manual");
  if (failback != "manual" && failback != "auto")
    throw ConfigError("[cluster] failback = " + failback + ": expected manual or auto");
  f.auto_failback = failback == "auto";
  f.heartbeat_ms = c.get_int("heartbeat_ms", f.heartbeat_ms);
  f.missed_heartbeats = static_cast<int>(c.get_int("missed_heartbeats", f.missed_heartbeats));
  f.lease_ms = c.get_int("lease_ms", f.lease_ms);
  f.startup_grace_ms = c.get_int("startup_grace_ms", f.startup_grace_ms);
  if (f.heartbeat_ms <= 0 || f.missed_heartbeats <= 0 || f.lease_ms < 1000 ||
      f.startup_grace_ms < 0)
    throw ConfigError("[cluster] heartbeat_ms and missed_heartbeats must be positive and "
                      "lease_ms at least 1000");
  return f;
}

const PeerOptions* ClusterOptions::owner_of(const std::string& volume) const {
  for (const auto& p : peers)
    for (const auto& v : p.volumes)
      if (v == volume) return &p;
  return nullptr;
}

}  // namespace nasd::cluster
