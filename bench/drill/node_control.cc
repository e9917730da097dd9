#include "bench/drill/node_control.h"

#include <signal.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

namespace nasd::drill {
namespace {

// Single-quoted for sh.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs `command` through sh, collecting stdout and stderr; its exit status (-1: not started).
int run_capture(const std::string& command, std::string* output) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  output->clear();
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) output->append(buf, n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

pid_t node_pid(const ClusterNode& node, std::string* error) {
  std::ifstream in(node.pid_file);
  long pid = 0;
  if (!(in >> pid) || pid <= 1) {
    *error = node.name + ": no pid in " + node.pid_file;
    return 0;
  }
  return static_cast<pid_t>(pid);
}

bool process_dead(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  // "pid (comm) S ...": the state follows the last ')'.
  const size_t close = line.rfind(')');
  return close == std::string::npos || close + 2 >= line.size() || line[close + 2] == 'Z' ||
         line[close + 2] == 'X';
}

bool signal_node(const ClusterNode& node, int sig, std::string* error) {
  const pid_t pid = node_pid(node, error);
  if (!pid) return false;
  if (::kill(pid, sig) != 0) {
    *error = node.name + ": kill(" + std::to_string(pid) + ", " + std::to_string(sig) + "): " + std::strerror(errno);
    return false;
  }
  return true;
}

bool kill_node(const ClusterNode& node, int64_t* dead_ms, std::string* error) {
  const pid_t pid = node_pid(node, error);
  if (!pid) return false;
  if (::kill(pid, SIGKILL) != 0) {
    *error = node.name + ": kill -9 " + std::to_string(pid) + ": " + std::strerror(errno);
    return false;
  }
  for (int i = 0; i < 1000; ++i) {
    if (process_dead(pid)) {
      *dead_ms = unix_ms();
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  *error = node.name + ": pid " + std::to_string(pid) + " still there 10 s after kill -9";
  return false;
}

bool restart_node(const ClusterNode& node, const NodeTools& tools, std::string* error) {
  std::string output;
  const int status = run_capture(quoted(tools.start_node) + " " + quoted(node.config), &output);
  std::ofstream(node.data_dir + "/drill-restart.log", std::ios::app) << output;
  if (status != 0) {
    *error = node.name + ": " + tools.start_node + " failed (status " + std::to_string(status) + "): " + output;
    return false;
  }
  return true;
}

bool admin_command(const ClusterNode& node, const NodeTools& tools, const std::string& command,
                   std::string* output) {
  return run_capture(quoted(tools.admin_bin) + " --socket " + quoted(node.admin) + " " + command, output) == 0;
}

std::string partition_script(const std::vector<ClusterNode>& nodes, const std::string& victim,
                             const std::string& table) {
  std::set<std::string> addresses;
  for (const ClusterNode& n : nodes) addresses.insert(n.address);
  std::ostringstream s;
  s << "table inet " << table << " {\n  chain cut {\n    type filter hook output priority 0; policy accept;\n";
  if (addresses.size() == nodes.size()) {
    std::string me, others;
    for (const ClusterNode& n : nodes) {
      if (n.name == victim) me = n.address;
      else others += (others.empty() ? "" : ", ") + n.address;
    }
    s << "    ip saddr " << me << " ip daddr { " << others << " } drop\n";
    s << "    ip saddr { " << others << " } ip daddr " << me << " drop\n";
  } else {
    // One address for all: the node-to-node endpoints by port, both directions.
    std::set<uint16_t> ports;
    for (const ClusterNode& n : nodes) {
      ports.insert(n.interconnect.port);
      if (n.mirror.port) ports.insert(n.mirror.port);
    }
    std::string list;
    for (uint16_t p : ports) list += (list.empty() ? "" : ", ") + std::to_string(p);
    s << "    tcp dport { " << list << " } drop\n";
    s << "    tcp sport { " << list << " } drop\n";
  }
  s << "  }\n}\n";
  return s.str();
}

std::string authority_cut_script(const std::vector<ClusterNode>& nodes, const std::string& victim,
                                 std::string* error, const std::string& table) {
  std::set<std::string> addresses;
  const ClusterNode* me = nullptr;
  for (const ClusterNode& n : nodes) {
    addresses.insert(n.address);
    if (n.name == victim) me = &n;
  }
  if (!me) {
    *error = "no node " + victim;
    return "";
  }
  if (addresses.size() != nodes.size()) {
    *error = "the nodes share an address: one node's etcd traffic cannot be told from another's";
    return "";
  }
  auto etcd = me->all.find("etcd");
  if (etcd == me->all.end() || etcd->second.empty()) {
    *error = "node " + victim + " lists no etcd member (etcd= in cluster.nodes): the authority fault needs "
             "[cluster] authority = etcd";
    return "";
  }
  std::ostringstream s;
  s << "table inet " << table << " {\n  chain cut {\n    type filter hook output priority 0; policy accept;\n";
  std::istringstream list(etcd->second);
  std::string member;
  int rules = 0;
  while (std::getline(list, member, ',') && rules < 16) {
    if (member.empty()) continue;
    auto e = parse_endpoint(member);
    if (!e || e->host.find_first_not_of("0123456789.") != std::string::npos) {
      *error = "node " + victim + ": etcd member '" + member + "' is not IPv4 address:port";
      return "";
    }
    s << "    ip saddr " << me->address << " ip daddr " << e->host << " tcp dport " << e->port << " drop\n";
    s << "    ip saddr " << e->host << " ip daddr " << me->address << " tcp sport " << e->port << " drop\n";
    ++rules;
  }
  if (!rules) {
    *error = "node " + victim + " lists no etcd member";
    return "";
  }
  s << "  }\n}\n";
  return s.str();
}

namespace {

std::string port_set(const std::set<uint16_t>& ports) {
  std::string list;
  for (uint16_t p : ports) list += (list.empty() ? "" : ", ") + std::to_string(p);
  return ports.size() == 1 ? list : "{ " + list + " }";
}

}  // namespace

std::string link_fault_script(const std::vector<ClusterNode>& nodes, const std::string& victim, NetFault fault,
                              int loss_percent, std::string* error, const std::string& table) {
  const ClusterNode* me = nullptr;
  std::set<std::string> addresses;
  for (const ClusterNode& n : nodes) {
    addresses.insert(n.address);
    if (n.name == victim) me = &n;
  }
  if (!me) {
    *error = "no node " + victim;
    return "";
  }
  if (fault.action == NetAction::Loss && (loss_percent < 1 || loss_percent > 100)) {
    *error = "the loss is 1 to 100 percent, not " + std::to_string(loss_percent);
    return "";
  }
  const bool own_addresses = addresses.size() == nodes.size();
  std::string others;
  for (const ClusterNode& n : nodes)
    if (n.name != victim) others += (others.empty() ? "" : ", ") + n.address;
  others = "{ " + others + " }";
  // Each rule: what the victim sends (out) or receives (in), as nft match text.
  std::vector<std::string> out, in;
  if (fault.link == NetLink::Client) {
    const std::string ports = port_set({me->nfs_port, me->mount_port});
    const std::string at = own_addresses ? "ip saddr " + me->address + " " : "";
    const std::string to = own_addresses ? "ip daddr " + me->address + " " : "";
    out.push_back(at + "tcp sport " + ports);
    in.push_back(to + "tcp dport " + ports);
  } else {
    auto port_of = [&](const ClusterNode& n) {
      return fault.link == NetLink::Interconnect ? n.interconnect.port : n.mirror.port;
    };
    std::set<uint16_t> all, theirs;
    for (const ClusterNode& n : nodes) {
      if (!port_of(n)) continue;
      all.insert(port_of(n));
      if (n.name != victim) theirs.insert(port_of(n));
    }
    if (all.empty() || (!own_addresses && (!port_of(*me) || theirs.empty()))) {
      *error = "no " + net_link_name(fault.link) + " link to fault (no node lists one in cluster.nodes)";
      return "";
    }
    if (own_addresses) {
      // Either end may have opened the connection: the link's port on either side.
      for (const char* side : {"dport", "sport"}) {
        out.push_back("ip saddr " + me->address + " ip daddr " + others + " tcp " + side + " " + port_set(all));
        in.push_back("ip saddr " + others + " ip daddr " + me->address + " tcp " + side + " " + port_set(all));
      }
    } else {
      // One address for all: the victim's end is its own port, or the others' ports it called.
      const std::string mine = std::to_string(port_of(*me));
      out.push_back("tcp sport " + mine);
      out.push_back("tcp dport " + port_set(theirs));
      in.push_back("tcp dport " + mine);
      in.push_back("tcp sport " + port_set(theirs));
    }
  }
  const std::string verdict =
      fault.action == NetAction::Loss ? "numgen random mod 100 < " + std::to_string(loss_percent) + " drop" : "drop";
  std::ostringstream s;
  s << "table inet " << table << " {\n  chain cut {\n    type filter hook output priority 0; policy accept;\n";
  for (const std::string& m : out) s << "    " << m << " " << verdict << "\n";
  if (fault.action != NetAction::OneWay)
    for (const std::string& m : in) s << "    " << m << " " << verdict << "\n";
  s << "  }\n}\n";
  return s.str();
}

std::string heal_script(const std::string& table) { return "delete table inet " + table + "\n"; }

bool run_nft(const std::string& script, std::string* error) {
  FILE* p = popen("nft -f - 2>&1", "w");
  if (!p) {
    *error = "cannot run nft";
    return false;
  }
  fwrite(script.data(), 1, script.size(), p);
  const int status = pclose(p);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *error = "nft refused the rules (status " + std::to_string(WEXITSTATUS(status)) + "; needs CAP_NET_ADMIN)";
    return false;
  }
  return true;
}

}  // namespace nasd::drill
