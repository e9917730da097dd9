// Which faults a drill runs, one at a time: either drawn from `--faults K1,K2 --rounds N
// --seed S` (every round runs each kind once, in an order and on a node drawn from the seed,
// so the same seed gives the same drill) or read from a schedule file, one fault per line:
//   kill9 NODE [DOWN_MS]          kill -9, restart after DOWN_MS with its config, failback
//   sigstop NODE [PAUSE_MS]       SIGSTOP, SIGCONT after PAUSE_MS
//   partition NODE [CUT_MS]       cut NODE's links to the other nodes for CUT_MS (nftables)
//   authority NODE [CUT_MS]       cut NODE off from the etcd lease authority only for CUT_MS
//                                 (nftables; peers and clients still reach it)
//   loss-LINK NODE [MS]           drop a share of NODE's packets on LINK, both ways, for MS
//                                 (nftables numgen random; the drill's --loss-percent)
//   oneway-LINK NODE [MS]         NODE hears the other end of LINK but is not heard, for MS
//   flap-LINK NODE [MS]           LINK goes down and up every --flap-ms, for MS
// where LINK is interconnect (node to node calls and heartbeats), mirror (the NVRAM mirror
// links) or client (NODE's NFS and MOUNT ports). See node_control.h, link_fault_script().
// '#' starts a comment. A duration of 0 or none takes the drill's default for that kind.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace nasd::drill {

enum class FaultKind {
  Kill9,
  Sigstop,
  Partition,
  Authority,
  LossInterconnect,
  LossMirror,
  LossClient,
  OneWayInterconnect,
  OneWayMirror,
  OneWayClient,
  FlapInterconnect,
  FlapMirror,
  FlapClient,
};

// The network faults of one link of a node: which link, and what happens on it.
enum class NetLink { Interconnect, Mirror, Client };
enum class NetAction { Loss, OneWay, Flap };
struct NetFault {
  NetAction action;
  NetLink link;
};
// The link fault a kind stands for; nullopt for the others (kill9, sigstop, ...).
std::optional<NetFault> net_fault(FaultKind kind);
std::string net_link_name(NetLink link);

struct Fault {
  FaultKind kind = FaultKind::Kill9;
  std::string node;
  int duration_ms = 0;  // 0: the drill's default for the kind
  std::vector<Fault> with;  // at most one: injected at the same moment, on another node
};

std::string fault_kind_name(FaultKind kind);
std::optional<FaultKind> parse_fault_kind(const std::string& name);

// "kill9,sigstop,partition" -> kinds; nullopt (and *error) for an unknown or empty list.
std::optional<std::vector<FaultKind>> parse_fault_kinds(const std::string& list, std::string* error);

std::vector<Fault> random_schedule(const std::vector<FaultKind>& kinds, int rounds, uint64_t seed,
                                   const std::vector<std::string>& nodes);

// `--faults random`: `count` faults, each of a kind drawn from `kinds` on a node drawn from
// `nodes`; about one in three comes with a second fault at the same moment, of a kind drawn the
// same way, on another node (two faults together: a node and the one holding its mirror, a node
// and the authority, a partition during a takeover...), never two kill9 at once (one restart at a
// time). The same seed gives the same drill.
std::vector<Fault> random_faults(const std::vector<FaultKind>& kinds, int count, uint64_t seed,
                                 const std::vector<std::string>& nodes);

// Nodes must be among `nodes`; nullopt with *error naming the line otherwise.
std::optional<std::vector<Fault>> parse_schedule(std::istream& in, const std::vector<std::string>& nodes,
                                                 std::string* error);

}  // namespace nasd::drill
