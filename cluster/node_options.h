// The [node] section of the config: who this node is and where it listens.
#pragma once

#include <cstdint>
#include <string>

#include "util/config.h"

namespace nasd::cluster {

struct NodeOptions {
  std::string name = "node0";
  std::string data_dir;  // absolute after from_config
  std::string listen = "127.0.0.1";
  uint16_t nfs_port = 2049;
  uint16_t mount_port = 20048;
  bool udp = true;
  unsigned workers = 0;  // 0 = one per core
  unsigned threads = 16;
  std::string rpcbind = "auto";  // auto | on | off
  std::string admin_socket;      // absolute
  std::string handle_key;        // absolute
  uint64_t max_record = 2u << 20;

  // Throws ConfigError on a missing section, an unknown key or a bad value.
  static NodeOptions from_config(const Config& config);
  // Resolves `p` against data_dir unless it is absolute.
  std::string in_data_dir(const std::string& p) const;
};

}  // namespace nasd::cluster
