// The fault drill's pure parts: the serving-interval checker (it must catch a double serve and
// must not invent one), the cluster.nodes parser, the fault schedule and the partition rules.
#include <gtest/gtest.h>
#include <algorithm>

#include <set>
#include <sstream>

#include "bench/drill/cluster_nodes.h"
#include "bench/drill/fault_schedule.h"
#include "bench/drill/node_control.h"
#include "bench/drill/serving_check.h"
#include "bench/drill/timeline.h"

namespace nasd::drill {
namespace {

std::vector<ServingInterval> parse(const std::string& node, const std::string& text,
                                   std::vector<int64_t> kills = {}, int64_t end = 100000) {
  std::vector<std::string> notes;
  return serving_intervals(NodeServingLog{node, text, std::move(kills)}, end, &notes);
}

std::vector<ServingInterval> both(std::vector<ServingInterval> a, const std::vector<ServingInterval>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(DrillServingCheck, CleanHandOverDoesNotOverlap) {
  auto a = parse("a", "1000 boot 1\n1100 start v0 1\n5000 stop v0 1 trusted_until=7000 last_served=4990\n");
  auto b = parse("b", "1000 boot 2\n5001 start v0 2\n");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].end_ms, 5000);
  EXPECT_EQ(a[0].ended, "stop");
  EXPECT_TRUE(find_overlaps(both(a, b), 0).empty());
}

TEST(DrillServingCheck, ReadyLinesGiveTheServingTime) {
  auto b = parse("b", "1000 boot 2\n5001 start v0 2\n5900 ready v0 2\n");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].start_ms, 5001);
  EXPECT_EQ(b[0].ready_ms, 5900);
}

TEST(DrillServingCheck, OverlappingIntervalsAreCaught) {
  // b starts while a's stop line (and its lease) says it still served.
  auto a = parse("a", "1100 start v0 1\n5000 stop v0 1 trusted_until=7000 last_served=4990\n");
  auto b = parse("b", "4000 start v0 2\n");
  auto overlaps = find_overlaps(both(a, b), 0);
  ASSERT_EQ(overlaps.size(), 1u);
  EXPECT_EQ(overlaps[0].overlap_ms, 1000);
  EXPECT_NE(overlaps[0].describe().find("volume v0 served by a"), std::string::npos);
  // Another volume at the same time is no overlap.
  EXPECT_TRUE(find_overlaps(both(a, parse("b", "4000 start v1 2\n")), 0).empty());
}

TEST(DrillServingCheck, PausedNodeEndsAtItsTrustDeadline) {
  // a paused at ~3000 with trust until 4000; b took over at 6000; a woke at 9000 and stopped.
  auto a = parse("a", "1100 start v0 1\n9000 stop v0 1 trusted_until=4000 last_served=2990\n");
  auto b = parse("b", "6000 start v0 2\n");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].end_ms, 4000);
  EXPECT_EQ(a[0].ended, "lease");
  EXPECT_TRUE(find_overlaps(both(a, b), 0).empty());
}

TEST(DrillServingCheck, PausedNodeThatActedLaterIsCounted) {
  // The same, but a call passed a's lease check at 7000 after it woke: a double serve.
  auto a = parse("a", "1100 start v0 1\n9000 stop v0 1 trusted_until=4000 last_served=7000\n");
  auto b = parse("b", "6000 start v0 2\n");
  EXPECT_EQ(a[0].end_ms, 7000);
  EXPECT_EQ(find_overlaps(both(a, b), 0).size(), 1u);
}

TEST(DrillServingCheck, KilledNodeEndsAtTheKill) {
  auto a = parse("a", "1000 boot 1\n1100 start v0 1\n20000 boot 7\n", {5000});
  auto b = parse("b", "9000 start v0 2\n");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].end_ms, 5000);
  EXPECT_EQ(a[0].ended, "kill");
  EXPECT_TRUE(find_overlaps(both(a, b), 0).empty());
  // Killed only after b had started: caught.
  EXPECT_EQ(find_overlaps(both(parse("a", "1100 start v0 1\n", {9500}), b), 0).size(), 1u);
}

TEST(DrillServingCheck, UnrecordedDeathIsBoundedByTheNextBootAndNoted) {
  std::vector<std::string> notes;
  auto a = serving_intervals(NodeServingLog{"a", "1100 start v0 1\n8000 boot 9\n", {}}, 100000, &notes);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].end_ms, 8000);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(find_overlaps(both(a, parse("b", "7000 start v0 2\n")), 0).size(), 1u);
}

TEST(DrillServingCheck, OpenIntervalsRunToTheEnd) {
  auto a = parse("a", "1100 start v0 1\n", {}, 50000);
  EXPECT_EQ(a[0].end_ms, 50000);
  EXPECT_EQ(a[0].ended, "open");
  EXPECT_EQ(find_overlaps(both(a, parse("b", "40000 start v0 2\n")), 0).size(), 1u);
}

TEST(DrillServingCheck, StaticOwnershipAndSkewAndGarbage) {
  auto a = parse("a", "1100 start v0 0\n5000 stop v0 0 trusted_until=- last_served=-\n");
  EXPECT_EQ(a[0].end_ms, 5000);
  auto b = parse("b", "5100 start v0 2\n");
  EXPECT_TRUE(find_overlaps(both(a, b), 0).empty());
  EXPECT_EQ(find_overlaps(both(a, b), 200).size(), 1u);  // 200 ms of clock skew could hide one
  std::vector<std::string> notes;
  serving_intervals(NodeServingLog{"a", "junk\n12 start\n99 stop v0 1 x=1 y=2\n", {}}, 100, &notes);
  EXPECT_EQ(notes.size(), 3u);
}

TEST(DrillServingCheck, SameNodeNeverOverlapsItself) {
  auto a = parse("a", "100 start v0 1\n200 stop v0 1 trusted_until=900 last_served=150\n190 start v0 1\n");
  EXPECT_TRUE(find_overlaps(a, 0).empty());
}

TEST(DrillClusterNodes, ParsesThePairFile) {
  std::istringstream in(
      "# written by start-cluster.sh\n"
      "name=a address=127.0.0.1 nfs_port=2049 mount_port=20048 interconnect=127.0.0.1:7001 "
      "mirror=127.0.0.1:7101 http=127.0.0.1:8049 admin=/x/a.sock pid=/x/a.pid config=/x/a.conf "
      "data_dir=/x/a volumes=v0 evs=\n"
      "name=b address=127.0.0.1 nfs_port=2149 mount_port=20148 interconnect=127.0.0.1:7002 "
      "mirror=127.0.0.1:7102 http=127.0.0.1:8149 admin=/x/b.sock pid=/x/b.pid config=/x/b.conf "
      "data_dir=/x/b volumes=v1,v3 evs=evs1 future=1\n");
  std::string error;
  auto nodes = parse_cluster_nodes(in, &error);
  ASSERT_TRUE(nodes) << error;
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[1].volumes, (std::vector<std::string>{"v1", "v3"}));
  EXPECT_EQ((*nodes)[1].interconnect.port, 7002);
  EXPECT_EQ((*nodes)[1].evs, "evs1");
  EXPECT_EQ((*nodes)[0].evs, "");
}

TEST(DrillClusterNodes, RejectsBrokenLines) {
  for (const char* bad : {"name=a", "name=a address=x nfs_port=99999 mount_port=1 interconnect=x:1 admin=a pid=p "
                                    "config=c data_dir=d volumes=v0",
                          "garbage"}) {
    std::istringstream in(bad);
    std::string error;
    EXPECT_FALSE(parse_cluster_nodes(in, &error)) << bad;
    EXPECT_FALSE(error.empty());
  }
}

std::vector<ClusterNode> ring(int nodes, int per_node, bool standby) {
  std::vector<ClusterNode> out;
  for (int i = 0; i < nodes + (standby ? 1 : 0); ++i) {
    ClusterNode n;
    n.name = "n" + std::to_string(i + 1);
    if (i < nodes)
      for (int k = 0; k < per_node; ++k) n.volumes.push_back("v" + std::to_string(i * per_node + k));
    out.push_back(n);
  }
  return out;
}

TEST(DrillClusterNodes, ClientsCoverEveryVolumeAndEveryNodeForwardsToEveryOther) {
  // The pair as before: a->v0, a->v1, b->v1, b->v0.
  std::vector<ClusterNode> pair = ring(2, 1, false);
  auto p = client_volumes(pair, 2);
  EXPECT_EQ(p[0], (std::vector<std::string>{"v0", "v1"}));
  EXPECT_EQ(p[1], (std::vector<std::string>{"v1", "v0"}));
  // 4 nodes x 4 volumes, 4 clients per node: each of the 16 volumes once; each node's first
  // client on its own volume, the others on a volume of each other node.
  auto nodes = ring(4, 4, false);
  auto c = client_volumes(nodes, 4);
  std::multiset<std::string> all;
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_EQ(c[i].size(), 4u);
    EXPECT_EQ(c[i][0], nodes[i].volumes[0]);
    std::set<std::string> homes;
    for (const std::string& v : c[i]) {
      all.insert(v);
      for (const ClusterNode& n : nodes)
        if (std::find(n.volumes.begin(), n.volumes.end(), v) != n.volumes.end()) homes.insert(n.name);
    }
    EXPECT_EQ(homes.size(), 4u) << "node " << i << " reaches a volume of every node";
  }
  EXPECT_EQ(all.size(), 16u);
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), 16u) << "no volume twice";
  // A standby gets clients too, on the primaries' volumes; more clients than distinct volumes
  // give one per volume.
  auto s = client_volumes(ring(3, 1, true), 2);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[3].size(), 2u);
  EXPECT_EQ(client_volumes(pair, 5)[0].size(), 2u);
}

TEST(DrillSchedule, RandomIsReproducibleAndCoversEveryKind) {
  auto kinds = *parse_fault_kinds("kill9,sigstop,partition", nullptr);
  auto s1 = random_schedule(kinds, 3, 42, {"a", "b"});
  auto s2 = random_schedule(kinds, 3, 42, {"a", "b"});
  ASSERT_EQ(s1.size(), 9u);
  for (size_t i = 0; i < s1.size(); ++i) {
    EXPECT_EQ(s1[i].kind, s2[i].kind);
    EXPECT_EQ(s1[i].node, s2[i].node);
  }
  for (int round = 0; round < 3; ++round) {
    std::set<FaultKind> seen;
    for (int k = 0; k < 3; ++k) seen.insert(s1[round * 3 + k].kind);
    EXPECT_EQ(seen.size(), 3u);
  }
  std::string error;
  EXPECT_FALSE(parse_fault_kinds("kill9,reboot", &error));
}

TEST(DrillSchedule, ParsesAFile) {
  std::istringstream in("# drill\nkill9 a 4000\nsigstop b   # default length\npartition a 6000\n");
  std::string error;
  auto s = parse_schedule(in, {"a", "b"}, &error);
  ASSERT_TRUE(s) << error;
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[0].duration_ms, 4000);
  EXPECT_EQ((*s)[1].duration_ms, 0);
  std::istringstream unknown("kill9 c\n");
  EXPECT_FALSE(parse_schedule(unknown, {"a", "b"}, &error));
  std::istringstream bad_ms("kill9 a soon\n");
  EXPECT_FALSE(parse_schedule(bad_ms, {"a", "b"}, &error));
}

TEST(DrillPartition, ByPortOnOneAddressByAddressOtherwise) {
  auto node = [](std::string name, std::string address, uint16_t ic, uint16_t mirror) {
    ClusterNode n;
    n.name = name;
    n.address = address;
    n.interconnect = {address, ic};
    n.mirror = {address, mirror};
    return n;
  };
  std::string pair = partition_script({node("a", "127.0.0.1", 7001, 7101), node("b", "127.0.0.1", 7002, 7102)}, "a");
  EXPECT_NE(pair.find("tcp dport { 7001, 7002, 7101, 7102 } drop"), std::string::npos) << pair;
  EXPECT_EQ(pair.find("2049"), std::string::npos);
  std::string four = partition_script({node("a", "127.0.1.1", 7001, 7101), node("b", "127.0.1.2", 7001, 7101),
                                       node("c", "127.0.1.3", 7001, 7101)},
                                      "b");
  EXPECT_NE(four.find("ip saddr 127.0.1.2 ip daddr { 127.0.1.1, 127.0.1.3 } drop"), std::string::npos) << four;
  EXPECT_NE(four.find("ip saddr { 127.0.1.1, 127.0.1.3 } ip daddr 127.0.1.2 drop"), std::string::npos) << four;
}

ClusterNode link_node(std::string name, std::string address, uint16_t ic, uint16_t mirror, uint16_t nfs,
                      uint16_t mount) {
  ClusterNode n;
  n.name = name;
  n.address = address;
  n.interconnect = {address, ic};
  n.mirror = {address, mirror};
  n.nfs_port = nfs;
  n.mount_port = mount;
  return n;
}

TEST(DrillLinkFaults, NamesParseAndEachStandsForOneActionOnOneLink) {
  std::string error;
  auto kinds = parse_fault_kinds("loss-interconnect,oneway-mirror,flap-client", &error);
  ASSERT_TRUE(kinds) << error;
  ASSERT_EQ(kinds->size(), 3u);
  EXPECT_EQ(net_fault((*kinds)[0])->action, NetAction::Loss);
  EXPECT_EQ(net_fault((*kinds)[0])->link, NetLink::Interconnect);
  EXPECT_EQ(net_fault((*kinds)[1])->action, NetAction::OneWay);
  EXPECT_EQ(net_fault((*kinds)[1])->link, NetLink::Mirror);
  EXPECT_EQ(net_fault((*kinds)[2])->action, NetAction::Flap);
  EXPECT_EQ(net_fault((*kinds)[2])->link, NetLink::Client);
  EXPECT_FALSE(net_fault(FaultKind::Partition));
  int network_kinds = 0;
  for (const char* action : {"loss", "oneway", "flap"})
    for (const char* link : {"interconnect", "mirror", "client"}) {
      auto k = parse_fault_kind(std::string(action) + "-" + link);
      ASSERT_TRUE(k) << action << "-" << link;
      EXPECT_EQ(fault_kind_name(*k), std::string(action) + "-" + link);
      ++network_kinds;
    }
  EXPECT_EQ(network_kinds, 9);
  EXPECT_FALSE(parse_fault_kinds("loss-disk", &error));
  EXPECT_NE(error.find("flap-client"), std::string::npos) << error;  // the list names them all
  std::istringstream in("loss-mirror a 3000\nflap-interconnect b\n");
  auto s = parse_schedule(in, {"a", "b"}, &error);
  ASSERT_TRUE(s) << error;
  EXPECT_EQ((*s)[0].kind, FaultKind::LossMirror);
  EXPECT_EQ((*s)[0].duration_ms, 3000);
  EXPECT_EQ((*s)[1].kind, FaultKind::FlapInterconnect);
  // A random schedule draws them like the others: every kind once a round.
  auto drawn = random_schedule(*kinds, 2, 9, {"a", "b"});
  ASSERT_EQ(drawn.size(), 6u);
  EXPECT_EQ(std::set<FaultKind>({drawn[0].kind, drawn[1].kind, drawn[2].kind}).size(), 3u);
}

TEST(DrillSchedule, RandomFaultsDrawKindsNodesAndOverlapsFromTheSeed) {
  std::string error;
  auto kinds = *parse_fault_kinds("kill9,sigstop,partition,loss-client,oneway-mirror,flap-interconnect", &error);
  const std::vector<std::string> nodes = {"n1", "n2", "n3", "n4"};
  auto a = random_faults(kinds, 300, 5, nodes);
  auto b = random_faults(kinds, 300, 5, nodes);
  ASSERT_EQ(a.size(), 300u);
  std::set<FaultKind> seen;
  std::set<std::string> victims;
  int together = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].kind, b[i].kind);
    EXPECT_EQ(a[i].node, b[i].node);
    ASSERT_EQ(a[i].with.size(), b[i].with.size());
    seen.insert(a[i].kind);
    victims.insert(a[i].node);
    if (a[i].with.empty()) continue;
    ++together;
    const Fault& w = a[i].with[0];
    EXPECT_EQ(w.kind, b[i].with[0].kind);
    EXPECT_NE(w.node, a[i].node);  // two nodes at once
    EXPECT_FALSE(w.kind == FaultKind::Kill9 && a[i].kind == FaultKind::Kill9);  // one restart at a time
    EXPECT_TRUE(w.with.empty());
  }
  EXPECT_EQ(seen.size(), kinds.size());
  EXPECT_EQ(victims.size(), nodes.size());
  EXPECT_GT(together, 60);  // about one in three
  EXPECT_LT(together, 140);
  auto other = random_faults(kinds, 300, 6, nodes);
  bool differs = false;
  for (size_t i = 0; i < other.size(); ++i) differs |= other[i].kind != a[i].kind || other[i].node != a[i].node;
  EXPECT_TRUE(differs);
  // One node: nothing to overlap with.
  for (const Fault& f : random_faults(kinds, 50, 5, {"only"})) EXPECT_TRUE(f.with.empty());
}

TEST(DrillLinkFaults, ThePairIsFaultedByPortTheRingByAddressAndPort) {
  const std::vector<ClusterNode> pair = {link_node("a", "127.0.0.1", 7001, 7101, 2049, 20048),
                                         link_node("b", "127.0.0.1", 7002, 7102, 2149, 20148)};
  std::string error;
  const std::string loss =
      link_fault_script(pair, "a", {NetAction::Loss, NetLink::Interconnect}, 5, &error);
  EXPECT_NE(loss.find("tcp sport 7001 numgen random mod 100 < 5 drop"), std::string::npos) << loss;
  EXPECT_NE(loss.find("tcp dport 7002 numgen random mod 100 < 5 drop"), std::string::npos) << loss;
  EXPECT_NE(loss.find("tcp dport 7001 numgen random mod 100 < 5 drop"), std::string::npos) << loss;
  EXPECT_EQ(loss.find("7101"), std::string::npos) << loss;  // not the mirror, not the clients
  EXPECT_EQ(loss.find("2049"), std::string::npos) << loss;
  // One way: only what a sends.
  const std::string oneway = link_fault_script(pair, "a", {NetAction::OneWay, NetLink::Mirror}, 5, &error);
  EXPECT_NE(oneway.find("tcp sport 7101 drop"), std::string::npos) << oneway;
  EXPECT_NE(oneway.find("tcp dport 7102 drop"), std::string::npos) << oneway;
  EXPECT_EQ(oneway.find("tcp dport 7101"), std::string::npos) << oneway;
  EXPECT_EQ(oneway.find("7001"), std::string::npos) << oneway;
  const std::string client = link_fault_script(pair, "b", {NetAction::Flap, NetLink::Client}, 5, &error);
  EXPECT_NE(client.find("tcp sport { 2149, 20148 } drop"), std::string::npos) << client;
  EXPECT_NE(client.find("tcp dport { 2149, 20148 } drop"), std::string::npos) << client;
  EXPECT_EQ(client.find("2049 "), std::string::npos) << client;

  const std::vector<ClusterNode> ring = {link_node("n1", "127.0.1.1", 7001, 7101, 2049, 20048),
                                         link_node("n2", "127.0.1.2", 7001, 7101, 2049, 20048),
                                         link_node("n3", "127.0.1.3", 7001, 7101, 2049, 20048)};
  const std::string cut = link_fault_script(ring, "n2", {NetAction::OneWay, NetLink::Interconnect}, 5, &error);
  EXPECT_NE(cut.find("ip saddr 127.0.1.2 ip daddr { 127.0.1.1, 127.0.1.3 } tcp dport 7001 drop"), std::string::npos)
      << cut;
  EXPECT_NE(cut.find("ip saddr 127.0.1.2 ip daddr { 127.0.1.1, 127.0.1.3 } tcp sport 7001 drop"), std::string::npos)
      << cut;
  EXPECT_EQ(cut.find("ip daddr 127.0.1.2"), std::string::npos) << cut;  // it still hears them
  const std::string clients = link_fault_script(ring, "n3", {NetAction::Loss, NetLink::Client}, 10, &error);
  EXPECT_NE(clients.find("ip saddr 127.0.1.3 tcp sport { 2049, 20048 } numgen random mod 100 < 10 drop"),
            std::string::npos)
      << clients;
  EXPECT_NE(clients.find("ip daddr 127.0.1.3 tcp dport { 2049, 20048 }"), std::string::npos) << clients;

  // No mirror anywhere, an unknown node, a loss out of range: refused with the reason.
  std::vector<ClusterNode> bare = ring;
  for (ClusterNode& n : bare) n.mirror = {};
  EXPECT_EQ(link_fault_script(bare, "n1", {NetAction::Loss, NetLink::Mirror}, 5, &error), "");
  EXPECT_NE(error.find("mirror"), std::string::npos) << error;
  EXPECT_EQ(link_fault_script(ring, "n9", {NetAction::Loss, NetLink::Client}, 5, &error), "");
  EXPECT_EQ(link_fault_script(ring, "n1", {NetAction::Loss, NetLink::Client}, 0, &error), "");
  EXPECT_EQ(link_fault_script(ring, "n1", {NetAction::Loss, NetLink::Client}, 101, &error), "");
  // Two faults at once: each its own table, each lifted alone.
  const std::string second = link_fault_script(ring, "n1", {NetAction::Flap, NetLink::Client}, 5, &error, "nasd_drill_with");
  EXPECT_EQ(second.rfind("table inet nasd_drill_with {", 0), 0u) << second;
  EXPECT_EQ(heal_script("nasd_drill_with"), "delete table inet nasd_drill_with\n");
  EXPECT_EQ(heal_script(), "delete table inet nasd_drill\n");
}

TEST(DrillAuthorityCut, OnlyTheVictimsEtcdTrafficNeverItsLinks) {
  auto node = [](std::string name, std::string address, std::string etcd) {
    ClusterNode n;
    n.name = name;
    n.address = address;
    n.interconnect = {address, 7001};
    if (!etcd.empty()) n.all["etcd"] = etcd;
    return n;
  };
  const std::string members = "127.0.0.1:2379,127.0.0.1:2479";
  std::string error;
  std::string cut = authority_cut_script(
      {node("n1", "127.0.1.1", members), node("n2", "127.0.1.2", members), node("n3", "127.0.1.3", members)}, "n2",
      &error);
  ASSERT_FALSE(cut.empty()) << error;
  EXPECT_NE(cut.find("ip saddr 127.0.1.2 ip daddr 127.0.0.1 tcp dport 2379 drop"), std::string::npos) << cut;
  EXPECT_NE(cut.find("ip saddr 127.0.0.1 ip daddr 127.0.1.2 tcp sport 2479 drop"), std::string::npos) << cut;
  EXPECT_EQ(cut.find("127.0.1.1"), std::string::npos) << cut;  // the other nodes untouched
  EXPECT_EQ(cut.find("7001"), std::string::npos) << cut;       // links and clients untouched
  // The pair shares 127.0.0.1: its etcd calls cannot be told apart. No etcd member: file.
  EXPECT_EQ(authority_cut_script({node("a", "127.0.0.1", members), node("b", "127.0.0.1", members)}, "a", &error), "");
  EXPECT_EQ(authority_cut_script({node("n1", "127.0.1.1", ""), node("n2", "127.0.1.2", "")}, "n1", &error), "");
  EXPECT_NE(error.find("authority = etcd"), std::string::npos) << error;
  EXPECT_EQ(authority_cut_script({node("n1", "127.0.1.1", "etcd.lab:2379"), node("n2", "127.0.1.2", "")}, "n1", &error), "");
  EXPECT_TRUE(parse_fault_kinds("authority", &error));
}

TEST(DrillTimeline, CountsPerSecond) {
  auto s = ops_per_second({1000, 1500, 1999, 2000, 4500, 500}, 1000, 4999);
  EXPECT_EQ(s, (std::vector<uint64_t>{3, 1, 0, 1}));
  std::ostringstream csv;
  write_ops_csv(csv, s, 1000);
  EXPECT_EQ(csv.str().substr(0, 30), "second,unix_ms,ops\n0,1000,3\n1,");
}

}  // namespace
}  // namespace nasd::drill
