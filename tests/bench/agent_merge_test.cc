// Merging agents' results (sums, histograms merged not averaged, failures named, the barrier
// spread), the hosts file and the round-robin rule.
#include <gtest/gtest.h>

#include <sstream>

#include "bench/agent_hosts.h"
#include "bench/agent_merge.h"
#include "bench/report_writer.h"

namespace nasd::bench {
namespace {

RunConfig two_step_config() {
  RunConfig c;
  c.targets = {parse_target("nfs://10.0.0.1/r/v0"), parse_target("nfs://10.0.0.2/r/v0")};
  c.loads = {40, 80};
  c.step_seconds = 10;
  return c;
}

// Agent A: 300 replies at 1 ms per step; agent B: 100 replies at 9 ms, 1 MB read each.
std::vector<AgentRecord> two_agents() {
  std::vector<AgentRecord> agents(2);
  agents[0].name = "lg1";
  agents[0].address = "10.0.0.11:7460";
  agents[0].targets = {0};
  agents[0].facts = {ServerFacts{65536, 65536, 0, 0, 100, 90, 10, 9}};
  agents[0].fileset_bytes = 1000;
  agents[0].build_seconds = 2;
  agents[1].name = "lg2";
  agents[1].address = "10.0.0.12:7460";
  agents[1].targets = {1};
  agents[1].facts = {ServerFacts{32768, 32768, 0, 0, 200, 150, 10, 9}};
  agents[1].fileset_bytes = 3000;
  agents[1].build_seconds = 5;
  for (int step = 0; step < 2; ++step) {
    AgentStepRecord a, b;
    for (int i = 0; i < 300; ++i) a.stats.record_reply(OpType::kGetattr, 1000000, 0);
    for (int i = 0; i < 100; ++i) b.stats.record_reply(OpType::kRead, 9000000, 0, 1000000);
    a.planned_start_ns = b.planned_start_ns = 1000000000;
    a.first_issue_ns = 1000000000 + 200000;   // 0.2 ms late
    b.first_issue_ns = 1000000000 + 1700000;  // 1.7 ms late
    b.refused = 1;
    if (step == 1) b.failure = "process 0: connection to nfs://10.0.0.2/r/v0 failed";
    agents[0].steps.push_back(a);
    agents[1].steps.push_back(b);
  }
  return agents;
}

TEST(AgentMergeTest, SumsOpsAndBytesAndMergesHistograms) {
  RunConfig c = two_step_config();
  RunResult r;
  merge_agent_results(c, two_agents(), &r);
  ASSERT_EQ(r.steps.size(), 2u);
  for (const StepResult& s : r.steps) {
    EXPECT_EQ(s.ok, 400u);
    EXPECT_DOUBLE_EQ(s.achieved_ops, 40.0);          // 30 + 10 ops/s
    EXPECT_DOUBLE_EQ(s.mb_per_sec, 10.0);            // 100 MB / 10 s
    // Merged, not averaged: (300*1 + 100*9)/400 = 3 ms, where the mean of means would be 5.
    EXPECT_NEAR(s.mean_ms, 3.0, 1e-9);
    EXPECT_NEAR(s.p50_ms, 1.0, 0.05);
    EXPECT_NEAR(s.p99_ms, 9.0, 0.3);
  }
  EXPECT_FALSE(r.steps[0].missed);
  EXPECT_TRUE(r.steps[1].missed);  // 40 of 80
  EXPECT_EQ(r.fileset_bytes, 4000u);
  EXPECT_DOUBLE_EQ(r.build_seconds, 5);
  EXPECT_EQ(r.refused, 2u);
  ASSERT_EQ(r.facts.size(), 2u);
  EXPECT_EQ(r.facts[0].free_bytes, 90u);
  EXPECT_EQ(r.facts[1].free_bytes, 150u);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_NE(r.failures[0].find("load generator lg2"), std::string::npos);
  ASSERT_EQ(r.agents.size(), 2u);
  EXPECT_EQ(r.agents[0].steps[0].ok, 300u);
  EXPECT_DOUBLE_EQ(r.agents[1].steps[0].achieved_ops, 10);
  EXPECT_DOUBLE_EQ(r.agents[1].steps[0].mb_per_sec, 10);
  EXPECT_NEAR(r.agents[1].steps[0].start_offset_ms, 1.7, 1e-9);
  ASSERT_EQ(r.step_start_spread_ms.size(), 2u);
  EXPECT_NEAR(r.step_start_spread_ms[0], 1.5, 1e-9);
  EXPECT_EQ(r.agents[1].targets, std::vector<std::string>{"nfs://10.0.0.2/r/v0"});
}

TEST(AgentMergeTest, ReportShowsEveryLoadGeneratorAndTheBarrier) {
  RunConfig c = two_step_config();
  c.workload = "vda";
  c.metric_unit = "Streams";
  c.business_metrics = {4, 8};
  RunResult r;
  merge_agent_results(c, two_agents(), &r);
  std::ostringstream out;
  write_report(out, c, r, ReportLabels{});
  const std::string text = out.str();
  EXPECT_NE(text.find("2 load generators with"), std::string::npos) << text;
  EXPECT_NE(text.find("Per Load Generator Results"), std::string::npos);
  EXPECT_NE(text.find("lg2               10.0.0.12:7460           nfs://10.0.0.2/r/v0"), std::string::npos) << text;
  EXPECT_NE(text.find("Step barrier: step 1 started on all 2 load generators within 1.50 msec"), std::string::npos);
  c.workload.clear();
  std::ostringstream old;
  write_report(old, c, r, ReportLabels{});
  EXPECT_NE(old.str().find("Number of Load Generators           2"), std::string::npos) << old.str();
}

TEST(AgentMergeTest, WrongStepCountIsRefused) {
  RunConfig c = two_step_config();
  auto agents = two_agents();
  agents[1].steps.pop_back();
  RunResult r;
  EXPECT_THROW(merge_agent_results(c, agents, &r), std::invalid_argument);
}

TEST(AgentHostsTest, ParsesNamesAddressesAndPorts) {
  auto hosts = parse_agent_hosts(
      "# load generators\n"
      "lg1 10.0.0.11:7000\n"
      "  lg2   10.0.0.12   # default port\n"
      "\n"
      "lg-3.x [fd00::3]:7001\n"
      "lg4 fd00::4\n");
  ASSERT_EQ(hosts.size(), 4u);
  EXPECT_EQ(hosts[0].host, "10.0.0.11");
  EXPECT_EQ(hosts[0].port, 7000);
  EXPECT_EQ(hosts[1].port, kDefaultAgentPort);
  EXPECT_EQ(hosts[2].host, "fd00::3");
  EXPECT_EQ(hosts[2].address(), "[fd00::3]:7001");
  EXPECT_EQ(hosts[3].host, "fd00::4");
  EXPECT_EQ(hosts[3].port, kDefaultAgentPort);
}

TEST(AgentHostsTest, RefusesMalformedLines) {
  EXPECT_THROW(parse_agent_hosts(""), HostsError);
  EXPECT_THROW(parse_agent_hosts("# nothing\n"), HostsError);
  EXPECT_THROW(parse_agent_hosts("lg1\n"), HostsError);
  EXPECT_THROW(parse_agent_hosts("lg1 10.0.0.1 extra\n"), HostsError);
  EXPECT_THROW(parse_agent_hosts("lg1 host.example.com\n"), HostsError);  // names are not resolved
  EXPECT_THROW(parse_agent_hosts("lg1 10.0.0.1:99999\n"), HostsError);
  EXPECT_THROW(parse_agent_hosts("lg/1 10.0.0.1\n"), HostsError);
  EXPECT_THROW(parse_agent_hosts(std::string(65, 'a') + " 10.0.0.1\n"), HostsError);
  EXPECT_THROW(parse_agent_hosts("lg1 10.0.0.1\nlg1 10.0.0.2\n"), HostsError);
  try {
    parse_agent_hosts("lg1 10.0.0.1\nlg2 nope\n", "hosts.txt");
    FAIL();
  } catch (const HostsError& e) {
    EXPECT_NE(std::string(e.what()).find("hosts.txt:2"), std::string::npos) << e.what();
  }
}

TEST(AgentHostsTest, TargetsGoRoundRobin) {
  using V = std::vector<std::vector<size_t>>;
  // 4 nodes, 8 agents: consecutive agents on consecutive nodes, two per node.
  EXPECT_EQ(assign_targets(4, 8), (V{{0}, {1}, {2}, {3}, {0}, {1}, {2}, {3}}));
  EXPECT_EQ(assign_targets(2, 2), (V{{0}, {1}}));
  EXPECT_EQ(assign_targets(1, 3), (V{{0}, {0}, {0}}));
  // More targets than agents: every target loaded by exactly one agent.
  EXPECT_EQ(assign_targets(5, 2), (V{{0, 2, 4}, {1, 3}}));
}

}  // namespace
}  // namespace nasd::bench
