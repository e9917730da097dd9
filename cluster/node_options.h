// The node's own keys of the [node] section: who this node is and where it keeps its state.
// The transport keys of the same section (listen, ports, workers, ...) are read by
// rpc::rpc_server_options_from_config; this is where unknown keys of the section are caught.
#pragma once

#include <string>

#include "util/config.h"
#include "util/log.h"

namespace nasd::cluster {

struct NodeOptions {
  std::string name = "node0";
  std::string data_dir;      // absolute
  std::string admin_socket;  // absolute
  std::string handle_key;    // absolute
  util::LogLevel log_level = util::LogLevel::Info;  // `log_level`: debug|info|warn|error|off

  // Throws ConfigError on a missing section or an unknown key.
  static NodeOptions from_config(const Config& config);
  // Resolves `p` against data_dir unless it is absolute.
  std::string in_data_dir(const std::string& p) const;
};

}  // namespace nasd::cluster
