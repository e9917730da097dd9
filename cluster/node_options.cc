#include "cluster/node_options.h"

#include <filesystem>

namespace nasd::cluster {

NodeOptions NodeOptions::from_config(const Config& config) {
  const ConfigSection* s = config.section("node");
  if (!s) throw ConfigError(config.origin() + ": no [node] section");
  auto unknown = s->unknown_keys({// the node's own
                                  "name", "data_dir", "admin_socket", "handle_key", "log_level",
                                  "cluster_config",  // read by NodePlan: the cluster's one file
                                  // read by the RPC transport
                                  "listen", "nfs_port", "mount_port", "udp", "workers", "threads",
                                  "inline_calls", "rpcbind", "max_record",
                                  "max_connections", "max_connections_per_client", "idle_timeout",
                                  // read by the metrics and management page listener
                                  "http_port", "http_listen", "http_password_file", "http_token_file",
                                  "http_tls_cert", "http_hosts"});
  if (!unknown.empty())
    throw ConfigError(config.origin() + ": [node] unknown key '" + unknown[0] + "'");
  NodeOptions o;
  o.name = s->get("name", o.name);
  o.data_dir = std::filesystem::absolute(config.resolve_path(s->get("data_dir", "data")))
                   .lexically_normal()
                   .string();
  while (o.data_dir.size() > 1 && o.data_dir.back() == '/') o.data_dir.pop_back();
  o.admin_socket = o.in_data_dir(s->get("admin_socket", "nasd.sock"));
  o.handle_key = o.in_data_dir(s->get("handle_key", "handle.key"));
  if (s->has("log_level")) {
    auto level = util::parse_log_level(s->get("log_level"));
    if (!level)
      throw ConfigError(config.origin() + ": [node] log_level = " + s->get("log_level") +
                        ": not one of debug, info, warn, error, off");
    o.log_level = *level;
  }
  return o;
}

std::string NodeOptions::in_data_dir(const std::string& p) const {
  if (!p.empty() && p.front() == '/') return p;
  return data_dir + "/" + p;
}

}  // namespace nasd::cluster
