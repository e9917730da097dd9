// The [cluster] and [peer NAME] sections: this node's interconnect address and, for every other
// node, where to reach it and which volumes it owns. A node owns every [volume] no peer claims.
// Without a [cluster] section the node runs alone and these are not read.
//
//   [cluster]
//   name = lab                       # nodes refuse a peer of another cluster
//   interconnect = 127.0.0.1:7001    # where this node's interconnect listens
//   [peer node1]
//   interconnect = 127.0.0.1:7002
//   volumes = v1                     # [volume NAME]s that node1 owns and this node forwards to it
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "util/config.h"

namespace nasd::cluster {

struct PeerOptions {
  std::string name;
  std::string host;
  uint16_t port = 0;
  std::vector<std::string> volumes;  // volume section names
};

struct ClusterOptions {
  std::string name;
  std::string host;
  uint16_t port = 0;
  std::vector<PeerOptions> peers;

  // nullopt without a [cluster] section. Throws ConfigError on an unknown key, a bad address,
  // a peer without volumes, a volume claimed twice or a volume with no [volume] section.
  static std::optional<ClusterOptions> from_config(const Config& config);
  // The peer that owns [volume NAME], or nullptr when this node owns it.
  const PeerOptions* owner_of(const std::string& volume) const;
};

// "host:port" -> parts; throws ConfigError naming `what`.
void parse_host_port(const std::string& text, const std::string& what, std::string* host,
                     uint16_t* port);

}  // namespace nasd::cluster
