// The fault drill: verifying clients on every node, one fault at a time from a schedule, and
// after each fault: the cluster healed (every volume back on its home node, failback where
// needed, every NVRAM mirror connected again: one fault at a time), every client paused and its acknowledged state read back through every node, the
// serving logs checked for two nodes serving one volume at once. A report per fault (takeover
// time, longest client stall, acknowledged operations checked and lost), a CSV of the faults, a
// CSV and an SVG plot of the clients' ops/s over time.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "bench/drill/cluster_nodes.h"
#include "bench/drill/fault_schedule.h"
#include "bench/drill/node_control.h"

namespace nasd::drill {

struct DrillOptions {
  std::string cluster_file;
  std::vector<Fault> schedule;
  std::string out_dir;             // report.txt, faults.csv, ops.csv, ops.svg
  std::string authority = "file";  // reported; the cluster is started with it, not the drill
  NodeTools tools;
  int clients_per_node = 2;        // volumes each node gets clients for (round robin)
  int settle_ms = 3000;            // load before the first fault and after each verification
  int kill_down_ms = 6000;         // how long a killed node stays down
  int pause_ms = 8000;             // SIGSTOP length (default past the 4 s lease: a takeover)
  int partition_ms = 8000;
  int authority_cut_ms = 8000;     // the authority fault (past the lease: the node must stop)
  int net_fault_ms = 6000;         // loss-*, oneway-* and flap-* faults
  int loss_percent = 5;            // of the packets of a loss-* fault's link
  int flap_ms = 300;               // a flap-* fault's link is down this long, then up as long
  int heal_timeout_ms = 90000;
  int verify_budget_ms = 30000;
  int call_timeout_ms = 3000;
  int retry_budget_ms = 60000;
  int skew_ms = 0;                 // clock skew between the nodes' machines
  int op_delay_us = 0;
  uint64_t seed = 1;
  std::string export_prefix = "/r/";  // a volume's export: prefix + volume name
};

struct FaultReport {
  int index = 0;
  Fault fault;
  int64_t at_ms = 0;                 // injected
  std::string injection_error;       // empty: injected
  std::vector<std::string> actions;  // what the drill did, with the time since the fault
  int64_t takeover_ms = -1;          // the first of the victim's volumes taken by another node
                                     // (its start line: the lease, fencing done); -1: none
  int64_t serving_ms = -1;           // the last of them served there (ready line); -1: not (yet)
  std::string takeover_detail;
  int64_t longest_stall_ms = 0;
  std::string stalled_client;
  int64_t all_acking_ms = -1;        // every client acknowledged again, after the fault
  int64_t healed_ms = -1;            // every volume back home; -1: not within the timeout
  uint64_t acknowledged = 0;         // by all clients, so far
  uint64_t checked = 0;              // acknowledged facts compared (per reading node)
  int64_t pause_ms = 0;              // waiting for the clients' calls in flight to end
  std::string slowest_pause;         // the client that took longest to pause
  int64_t verify_ms = 0;             // reading everything back through every node
  uint64_t gave_up = 0;              // client calls out of retry budget, so far
  uint64_t lost = 0;
  std::vector<std::string> lost_lines;
  std::vector<std::string> verify_errors;
  size_t intervals = 0;
  std::vector<std::string> overlaps;
};

// Runs the drill; the report goes to `out` as it goes. Exit status: 0 when nothing was lost,
// no overlap was found and every fault was injected and healed; 1 otherwise.
int run_drill(const DrillOptions& options, const std::vector<ClusterNode>& nodes, std::ostream& out);

}  // namespace nasd::drill
