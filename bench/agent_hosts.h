// The load-generating hosts of a many-host run, and which targets each one loads.
//
// Hosts file (`nasd-loadgen --agents FILE`): one agent per line, `#` starts a comment:
//
//   NAME  ADDRESS[:PORT]        e.g.   lg1  10.0.0.11:7460    lg2  [fd00::12]:7460    lg3  10.0.0.13
//
// NAME is the `--name` the agent was started with (it is part of the handshake: an agent that
// is not NAME fails it); ADDRESS is numeric (IPv4, or IPv6 in brackets with a port); the port
// defaults to kDefaultAgentPort. Names are unique, [A-Za-z0-9._-], at most 64 characters.
//
// Round-robin rule (the dataflow of the SFS2014 reference report: "as the load scaled up, each
// additional process used the next node"): with T targets and A agents in file order, agent k
// loads target k mod T when T <= A, so consecutive agents land on consecutive nodes and every
// node gets A/T agents (give every node of a cluster as a target to spread the load over all of
// them); when T > A, agent k loads targets k, k+A, k+2A, ... and rotates over them request by
// request, so every target is loaded by exactly one agent.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace nasd::bench {

inline constexpr uint16_t kDefaultAgentPort = 7460;
inline constexpr size_t kMaxAgents = 1024;

struct AgentHost {
  std::string name;
  std::string host;  // numeric, without brackets
  uint16_t port = kDefaultAgentPort;
  std::string address() const;  // "10.0.0.11:7460", "[::1]:7460"
};

struct HostsError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Throws HostsError naming the line for a malformed line, a duplicate name, no agents at all, or
// more than kMaxAgents.
std::vector<AgentHost> parse_agent_hosts(const std::string& text, const std::string& origin = "<hosts>");
std::vector<AgentHost> load_agent_hosts(const std::string& path);

// Is `name` usable as an agent name (and as part of a workdir name)?
bool valid_agent_name(const std::string& name);

// The round-robin rule above: for each of `agents` agents, the indices of its targets.
std::vector<std::vector<size_t>> assign_targets(size_t targets, size_t agents);

}  // namespace nasd::bench
