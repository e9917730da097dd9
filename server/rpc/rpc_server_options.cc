#include "server/rpc/rpc_server_options.h"

#include <stdexcept>
#include <string>

namespace nasd::rpc {
namespace {

uint16_t port_value(const ConfigSection& node, const std::string& key, int64_t dflt) {
  int64_t v = node.get_int(key, dflt);
  if (v < 0 || v > 65535)
    throw ConfigError("[node] " + key + " = " + std::to_string(v) + ": not a port number");
  return static_cast<uint16_t>(v);
}

}  // namespace

RpcServerOptions rpc_server_options_from_config(const ConfigSection& node) {
  RpcServerOptions o;
  o.bind_address = node.get("listen", o.bind_address);
  o.ports = {port_value(node, "nfs_port", 2049), port_value(node, "mount_port", 20048)};
  if (o.ports[0] == o.ports[1] && o.ports[0] != 0) o.ports.pop_back();
  o.udp = node.get_bool("udp", true);
  int64_t workers = node.get_int("workers", 0);
  int64_t threads = node.get_int("threads", 16);
  if (workers < 0 || workers > 1024) throw ConfigError("[node] workers out of range (0..1024)");
  if (threads < 1 || threads > 4096) throw ConfigError("[node] threads out of range (1..4096)");
  o.workers = static_cast<unsigned>(workers);
  o.threads = static_cast<unsigned>(threads);
  o.run_inline = node.get_bool("inline_calls", true);
  uint64_t max_record = node.get_size("max_record", 2 << 20);
  // Below a few KiB not even a small WRITE fits; above 2^31 the record mark cannot say it.
  if (max_record < 4096 || max_record > (1ull << 31) - 1)
    throw ConfigError("[node] max_record out of range (4k..2G)");
  o.tcp.max_record = max_record;
  const int64_t max_conn = node.get_int("max_connections", 4096);
  const int64_t per_client = node.get_int("max_connections_per_client", 256);
  const int64_t idle = node.get_int("idle_timeout", 360);
  if (max_conn < 0 || max_conn > 1000000)
    throw ConfigError("[node] max_connections out of range (0..1000000, 0: no cap)");
  if (per_client < 0 || per_client > 1000000)
    throw ConfigError("[node] max_connections_per_client out of range (0..1000000, 0: no cap)");
  if (idle < 0 || idle > 86400)
    throw ConfigError("[node] idle_timeout out of range (0..86400 seconds, 0: never)");
  o.tcp.max_connections = static_cast<size_t>(max_conn);
  o.tcp.max_connections_per_address = static_cast<size_t>(per_client);
  o.tcp.idle_timeout = std::chrono::seconds(idle);
  try {
    o.rpcbind.mode = parse_rpcbind_mode(node.get("rpcbind", "auto"));
  } catch (const std::invalid_argument& e) {
    throw ConfigError(std::string("[node] ") + e.what());
  }
  return o;
}

}  // namespace nasd::rpc
