// nasd-drill: the fault drill against a running cluster (see bench/README.md, "Fault drill").
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "bench/drill/drill.h"

namespace {

const char kUsage[] = R"(usage: nasd-drill [options]
  --cluster FILE          the cluster description (default $CLUSTER_DIR/cluster.nodes,
                          else ./data/cluster/cluster.nodes)
  --faults K1,K2,...      fault kinds: kill9, sigstop, partition (the default three), and
                          authority (one node cut off from the etcd authority only; needs
                          --authority etcd: the file authority has no network path to cut);
                          the link faults loss-L, oneway-L and flap-L, where L is interconnect,
                          mirror or client (a share of the node's packets on that link lost,
                          the node not heard on it, the link down and up; nftables)
  --rounds N              each round runs every kind once, order and node drawn from the seed
                          (default $DRILL_ROUNDS, else 1); with --faults random: N faults
  --faults random         N faults of kinds and on nodes drawn from the seed, about one in three
                          together with a second on another node at the same moment (every kind
                          the cluster can take; the seed is printed for the replay)
  --seed S                (default: the time)
  --schedule FILE         explicit faults instead, one per line: KIND NODE [MS]
  --down-ms MS            how long a killed node stays down before its restart (6000)
  --pause-ms MS           SIGSTOP length (8000: past the default 4 s lease, so a takeover)
  --partition-ms MS       how long the partition lasts (8000)
  --authority-cut-ms MS   how long the authority fault lasts (8000: past the default 4 s lease)
  --net-fault-ms MS       how long a loss-, oneway- or flap- fault lasts (6000)
  --loss-percent P        the share of a loss- fault's packets dropped (5)
  --flap-ms MS            a flap- fault's link is down this long, then up as long (300)
  --settle-ms MS          load before the first fault and after each heal (3000)
  --clients-per-node N    volumes each node gets a verifying client for (2)
  --heal-timeout-ms MS    how long the cluster may take to serve every volume at home (90000)
  --call-timeout-ms MS    one attempt of a client call (3000)
  --retry-budget-ms MS    one client call over all its attempts (60000)
  --op-delay-us US        a pause between a client's calls (0)
  --skew-ms MS            clock skew between the nodes' machines for the overlap check (0)
  --authority NAME        the lease authority the cluster was started with, for the report:
                          file (default) or etcd
  --out DIR               faults.csv, ops.csv, ops.svg (default ./drill-<time>)
  --admin PATH            nasd-admin (default: the one built with this drill)
  --start-node PATH       deploy/start-node.sh (default: the one of this source tree)
Exit status 0: every fault injected and healed, nothing acknowledged lost, no two nodes
serving one volume at once; 1 otherwise; 2 for a usage error.
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace nasd::drill;
  DrillOptions o;
  o.tools.admin_bin = NASD_DRILL_ADMIN;
  o.tools.start_node = NASD_DRILL_START_NODE;
  o.seed = static_cast<uint64_t>(unix_ms());
  std::string faults = "kill9,sigstop,partition", schedule_file;
  int rounds = std::getenv("DRILL_ROUNDS") ? std::atoi(std::getenv("DRILL_ROUNDS")) : 1;
  const char* cluster_dir = std::getenv("CLUSTER_DIR");
  o.cluster_file = cluster_dir ? std::string(cluster_dir) + "/cluster.nodes" : "data/cluster/cluster.nodes";
  auto usage = [](const std::string& why) {
    std::cerr << "nasd-drill: " << why << "\n" << kUsage;
    return 2;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (i + 1 >= argc) return usage(a + " needs a value");
    const std::string v = argv[++i];
    auto number = [&](int* out) {
      if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) return false;
      *out = std::stoi(v);
      return true;
    };
    bool ok = true;
    if (a == "--cluster") o.cluster_file = v;
    else if (a == "--faults") faults = v;
    else if (a == "--rounds") ok = number(&rounds);
    else if (a == "--seed") {
      ok = !v.empty() && v.size() < 20 && v.find_first_not_of("0123456789") == std::string::npos;
      if (ok) o.seed = std::stoull(v);
    } else if (a == "--schedule") schedule_file = v;
    else if (a == "--down-ms") ok = number(&o.kill_down_ms);
    else if (a == "--pause-ms") ok = number(&o.pause_ms);
    else if (a == "--partition-ms") ok = number(&o.partition_ms);
    else if (a == "--authority-cut-ms") ok = number(&o.authority_cut_ms);
    else if (a == "--settle-ms") ok = number(&o.settle_ms);
    else if (a == "--net-fault-ms") ok = number(&o.net_fault_ms);
    else if (a == "--loss-percent") ok = number(&o.loss_percent) && o.loss_percent >= 1 && o.loss_percent <= 100;
    else if (a == "--flap-ms") ok = number(&o.flap_ms) && o.flap_ms >= 10;
    else if (a == "--clients-per-node") ok = number(&o.clients_per_node);
    else if (a == "--heal-timeout-ms") ok = number(&o.heal_timeout_ms);
    else if (a == "--call-timeout-ms") ok = number(&o.call_timeout_ms);
    else if (a == "--retry-budget-ms") ok = number(&o.retry_budget_ms);
    else if (a == "--op-delay-us") ok = number(&o.op_delay_us);
    else if (a == "--skew-ms") ok = number(&o.skew_ms);
    else if (a == "--authority") {
      if (v != "file" && v != "etcd") return usage("--authority is file or etcd");
      o.authority = v;
    } else if (a == "--out") o.out_dir = v;
    else if (a == "--admin") o.tools.admin_bin = v;
    else if (a == "--start-node") o.tools.start_node = v;
    else return usage("unknown option " + a);
    if (!ok) return usage(a + " takes a number, not '" + v + "'");
  }
  std::string error;
  std::ifstream cluster(o.cluster_file);
  if (!cluster) return usage("cannot read " + o.cluster_file + " (start the cluster with deploy/start-cluster.sh)");
  auto nodes = parse_cluster_nodes(cluster, &error);
  if (!nodes) return usage(error);
  std::vector<std::string> names;
  for (const ClusterNode& n : *nodes) names.push_back(n.name);
  if (nodes->size() < 2) return usage("a drill needs at least two nodes");
  if (!schedule_file.empty()) {
    std::ifstream in(schedule_file);
    if (!in) return usage("cannot read " + schedule_file);
    auto s = parse_schedule(in, names, &error);
    if (!s) return usage(error);
    o.schedule = *s;
  } else if (faults == "random") {
    // Every kind this cluster can take: authority only with etcd, the mirror link's only when
    // a node has a mirror.
    bool mirrors = false;
    for (const ClusterNode& n : *nodes) mirrors |= n.mirror.port != 0;
    std::string list = "kill9,sigstop,partition,loss-interconnect,loss-client,oneway-interconnect,"
                       "oneway-client,flap-interconnect,flap-client";
    if (mirrors) list += ",loss-mirror,oneway-mirror,flap-mirror";
    if (o.authority == "etcd") list += ",authority";
    auto kinds = parse_fault_kinds(list, &error);
    if (!kinds) return usage(error);
    if (rounds < 1) return usage("--rounds must be at least 1");
    o.schedule = random_faults(*kinds, rounds, o.seed, names);
    std::cout << "random faults, seed " << o.seed << " (replay: --faults random --seed " << o.seed
              << " --rounds " << rounds << ")\n";
  } else {
    auto kinds = parse_fault_kinds(faults, &error);
    if (!kinds) return usage(error);
    if (rounds < 1) return usage("--rounds must be at least 1");
    o.schedule = random_schedule(*kinds, rounds, o.seed, names);
  }
  for (const Fault& f : o.schedule)
    if ((f.kind == FaultKind::Authority || (!f.with.empty() && f.with[0].kind == FaultKind::Authority)) &&
        o.authority != "etcd")
      return usage("the authority fault needs --authority etcd (the file authority is a shared folder: no "
                   "network path to cut)");
  if (o.out_dir.empty()) o.out_dir = "drill-" + std::to_string(unix_ms() / 1000);
  std::filesystem::create_directories(o.out_dir);
  // The report goes to stdout and to <out>/report.txt.
  std::ofstream file(o.out_dir + "/report.txt");
  struct Tee : std::streambuf {
    std::streambuf *a, *b;
    int overflow(int c) override {
      if (c != EOF) {
        a->sputc(static_cast<char>(c));
        b->sputc(static_cast<char>(c));
      }
      return c;
    }
    int sync() override { return a->pubsync() | b->pubsync(); }
  } tee;
  tee.a = std::cout.rdbuf();
  tee.b = file.rdbuf();
  std::ostream out(&tee);
  return run_drill(o, *nodes, out);
}
