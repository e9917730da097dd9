#include "bench/agent_hosts.h"

#include <fstream>
#include <set>
#include <sstream>

#include "util/link_handshake.h"
#include "util/net.h"

namespace nasd::bench {

std::string AgentHost::address() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

bool valid_agent_name(const std::string& name) {
  if (name.empty() || name.size() > link::kMaxNodeName || name == "." || name == "..") return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::vector<AgentHost> parse_agent_hosts(const std::string& text, const std::string& origin) {
  std::vector<AgentHost> hosts;
  std::set<std::string> names;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = origin + ":" + std::to_string(number) + ": ";
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string name, address, extra;
    if (!(words >> name)) continue;
    if (!(words >> address) || (words >> extra)) throw HostsError(where + "expected `NAME ADDRESS[:PORT]`");
    if (!valid_agent_name(name)) throw HostsError(where + "agent name '" + name + "' is not [A-Za-z0-9._-]{1,64}");
    if (!names.insert(name).second) throw HostsError(where + "agent name '" + name + "' appears twice");
    AgentHost h;
    h.name = name;
    // "[v6]:port", "v4:port", or a bare address (an IPv6 one has more than one ':').
    bool has_port = address.front() == '[' || address.find(':') == address.rfind(':');
    if (address.find(':') == std::string::npos) has_port = false;
    if (has_port) {
      if (!util::split_host_port(address, &h.host, &h.port) || h.port == 0) {
        throw HostsError(where + "'" + address + "' is not ADDRESS:PORT");
      }
    } else {
      h.host = address;
    }
    util::SocketAddress parsed;
    std::string error;
    if (!util::parse_socket_address(h.host, h.port, &parsed, &error)) {
      throw HostsError(where + "'" + h.host + "' is not a numeric IPv4 or IPv6 address");
    }
    hosts.push_back(std::move(h));
    if (hosts.size() > kMaxAgents) throw HostsError(origin + ": more than " + std::to_string(kMaxAgents) + " agents");
  }
  if (hosts.empty()) throw HostsError(origin + ": no agents listed");
  return hosts;
}

std::vector<AgentHost> load_agent_hosts(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw HostsError("cannot read the hosts file " + path);
  std::ostringstream text;
  text << f.rdbuf();
  return parse_agent_hosts(text.str(), path);
}

std::vector<std::vector<size_t>> assign_targets(size_t targets, size_t agents) {
  std::vector<std::vector<size_t>> out(agents);
  if (targets == 0 || agents == 0) return out;
  if (targets <= agents) {
    for (size_t k = 0; k < agents; ++k) out[k].push_back(k % targets);
  } else {
    for (size_t t = 0; t < targets; ++t) out[t % agents].push_back(t);
  }
  return out;
}

}  // namespace nasd::bench
