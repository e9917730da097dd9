#include "cluster/node_options.h"

#include <filesystem>

namespace nasd::cluster {
namespace {

uint16_t port_value(const ConfigSection& s, const std::string& key, uint16_t dflt) {
  int64_t v = s.get_int(key, dflt);
  if (v <= 0 || v > 65535) throw ConfigError("[node] " + key + ": not a port: " + std::to_string(v));
  return static_cast<uint16_t>(v);
}

}  // namespace

NodeOptions NodeOptions::from_config(const Config& config) {
  const ConfigSection* s = config.section("node");
  if (!s) throw ConfigError(config.origin() + ": no [node] section");
  auto unknown = s->unknown_keys({"name", "data_dir", "listen", "nfs_port", "mount_port", "udp",
                                  "workers", "threads", "rpcbind", "admin_socket", "handle_key",
                                  "max_record"});
  if (!unknown.empty()) throw ConfigError(config.origin() + ": [node] unknown key '" + unknown[0] + "'");
  NodeOptions o;
  o.name = s->get("name", o.name);
  o.data_dir = std::filesystem::absolute(config.resolve_path(s->get("data_dir", "data"))).lexically_normal();
  o.listen = s->get("listen", o.listen);
  o.nfs_port = port_value(*s, "nfs_port", o.nfs_port);
  o.mount_port = port_value(*s, "mount_port", o.mount_port);
  o.udp = s->get_bool("udp", o.udp);
  int64_t workers = s->get_int("workers", 0), threads = s->get_int("threads", o.threads);
  if (workers < 0 || workers > 256) throw ConfigError("[node] workers: out of range 0..256");
  if (threads < 1 || threads > 1024) throw ConfigError("[node] threads: out of range 1..1024");
  o.workers = static_cast<unsigned>(workers);
  o.threads = static_cast<unsigned>(threads);
  o.rpcbind = s->get("rpcbind", o.rpcbind);
  if (o.rpcbind != "auto" && o.rpcbind != "on" && o.rpcbind != "off")
    throw ConfigError("[node] rpcbind: expected auto, on or off");
  o.admin_socket = o.in_data_dir(s->get("admin_socket", "nasd.sock"));
  o.handle_key = o.in_data_dir(s->get("handle_key", "handle.key"));
  o.max_record = s->get_size("max_record", o.max_record);
  if (o.max_record < (64u << 10) || o.max_record > (64u << 20))
    throw ConfigError("[node] max_record: out of range 64k..64M");
  return o;
}

std::string NodeOptions::in_data_dir(const std::string& p) const {
  if (!p.empty() && p.front() == '/') return p;
  return data_dir + "/" + p;
}

}  // namespace nasd::cluster
