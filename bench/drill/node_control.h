// What the drill does to the nodes: signals by the pid file, a restart with the node's own
// config (deploy/start-node.sh), admin commands over the node's socket (nasd-admin), and the
// network faults (a partition, a cut from the authority, loss, one-way cuts and flapping links)
// as an nftables table of its own (`inet nasd_drill`, removed afterwards).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bench/drill/cluster_nodes.h"
#include "bench/drill/fault_schedule.h"

namespace nasd::drill {

struct NodeTools {
  std::string admin_bin;   // nasd-admin
  std::string start_node;  // deploy/start-node.sh
};

// The node's pid from its pid file; 0 (and *error) when unreadable.
pid_t node_pid(const ClusterNode& node, std::string* error);
// Gone or a zombie: it can do nothing any more.
bool process_dead(pid_t pid);
// Sends `sig` to the node; false with *error.
bool signal_node(const ClusterNode& node, int sig, std::string* error);
// kill -9, then waits (bounded, 10 s) until the process is gone; *dead_ms is the Unix ms at
// which it was seen gone (the end of its last serving interval for the checker).
bool kill_node(const ClusterNode& node, int64_t* dead_ms, std::string* error);
// Starts the node again with its config; output to <data_dir>/drill-restart.log.
bool restart_node(const ClusterNode& node, const NodeTools& tools, std::string* error);
// Runs `nasd-admin --socket ADMIN <command>`; its output, false when it failed.
bool admin_command(const ClusterNode& node, const NodeTools& tools, const std::string& command,
                   std::string* output);

// The nftables script that cuts `victim` off from every other node. When every node has an
// address of its own, by address (packets between the victim's address and the others'); when
// nodes share an address (the pair on 127.0.0.1), by the interconnect and mirror ports, which
// cuts every link between nodes (with two nodes: the victim from the other). Client traffic to
// the NFS and MOUNT ports is never touched.
// Every script names its table: `kDrillTable` unless two faults run at once (each its own).
inline constexpr const char* kDrillTable = "nasd_drill";
std::string partition_script(const std::vector<ClusterNode>& nodes, const std::string& victim,
                             const std::string& table = kDrillTable);
// The nftables script (same table) that cuts `victim` off from the lease authority only: its
// packets to the etcd members' client ports (`etcd=host:port,...` in cluster.nodes) and theirs
// back. Every node must have an address of its own (its etcd calls leave from it, like its
// links); "" with *error otherwise, or when the node lists no etcd member (the file authority
// is a shared folder: there is no network path to cut).
std::string authority_cut_script(const std::vector<ClusterNode>& nodes, const std::string& victim,
                                 std::string* error, const std::string& table = kDrillTable);
// The nftables script (same table) of a fault on one link of `victim` (fault_schedule.h):
//   interconnect / mirror: its packets to and from the other nodes' interconnect (or mirror)
//     endpoints -- by address and port when every node has an address of its own, by port alone
//     when they share one (the pair: the victim's own port and the others');
//   client: its NFS and MOUNT ports (on its address when the nodes have their own);
// Loss drops `loss_percent` of them both ways (numgen random), OneWay drops only what the
// victim sends (it hears the other end but is not heard), Flap drops all of them (the drill
// adds and deletes the table every flap period). "" with *error when the link does not exist
// (no node has a mirror) or the percentage is not 1..100.
std::string link_fault_script(const std::vector<ClusterNode>& nodes, const std::string& victim, NetFault fault,
                              int loss_percent, std::string* error, const std::string& table = kDrillTable);
std::string heal_script(const std::string& table = kDrillTable);
// Feeds a script to `nft -f -`; false with *error (nft's own words).
bool run_nft(const std::string& script, std::string* error);

int64_t unix_ms();

}  // namespace nasd::drill
