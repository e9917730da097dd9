#include "server/rpc/call_stats.h"

#include <gtest/gtest.h>

#include <thread>

#include "server/admin/stats_command.h"

namespace nasd::rpc {
namespace {

using std::chrono::microseconds;

TEST(CallStats, LatencyBuckets) {
  EXPECT_EQ(latency_bucket(0), 0u);
  EXPECT_EQ(latency_bucket(1), 0u);
  EXPECT_EQ(latency_bucket(2), 1u);
  EXPECT_EQ(latency_bucket(3), 1u);
  EXPECT_EQ(latency_bucket(1024), 10u);
  EXPECT_EQ(latency_bucket(~uint64_t{0}), kLatencyBuckets - 1);
}

TEST(CallStats, CountsPerProcedure) {
  CallStats stats;
  stats.add_program(100003, 3, "nfs", {"null", "getattr"});
  stats.record_call(100003, 3, 1, false, microseconds(100));
  stats.record_call(100003, 3, 1, true, microseconds(300));
  stats.record_call(100003, 3, 0, false, microseconds(1));
  stats.record_call(100003, 3, 9, false, microseconds(1));  // undeclared: ignored
  stats.record_call(100005, 3, 0, false, microseconds(1));  // undeclared program: ignored
  StatsSnapshot s = stats.snapshot();
  ASSERT_EQ(s.programs.size(), 1u);
  const auto& getattr = s.programs[0].procs[1];
  EXPECT_EQ(getattr.name, "getattr");
  EXPECT_EQ(getattr.calls, 2u);
  EXPECT_EQ(getattr.errors, 1u);
  EXPECT_DOUBLE_EQ(getattr.mean_us(), 200.0);
  EXPECT_EQ(s.programs[0].procs[0].calls, 1u);
}

TEST(CallStats, PercentilesFollowTheHistogram) {
  CallStats stats;
  stats.add_program(1, 1, "p", {"x"});
  for (int i = 0; i < 99; ++i) stats.record_call(1, 1, 0, false, microseconds(10));   // [8,16)
  stats.record_call(1, 1, 0, false, microseconds(5000));                              // [4096,8192)
  ProcSnapshot p = stats.snapshot().programs[0].procs[0];
  EXPECT_GE(p.percentile_us(0.5), 8.0);
  EXPECT_LT(p.percentile_us(0.5), 16.0);
  EXPECT_LE(p.percentile_us(0.99), 16.0);
  EXPECT_GE(p.percentile_us(1.0), 4096.0);
}

TEST(CallStats, ConcurrentUpdatesAreNotLost) {
  CallStats stats;
  stats.add_program(1, 1, "p", {"x"});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        stats.record_call(1, 1, 0, false, microseconds(i));
        stats.count(TransportCounter::TcpRecords);
      }
    });
  for (auto& t : threads) t.join();
  StatsSnapshot s = stats.snapshot();
  EXPECT_EQ(s.programs[0].procs[0].calls, 40000u);
  EXPECT_EQ(s.counter(TransportCounter::TcpRecords), 40000u);
}

TEST(CallStats, ResetZeroesCountersButNotOpenConnections) {
  CallStats stats;
  stats.add_program(1, 1, "p", {"x"});
  stats.record_call(1, 1, 0, true, microseconds(5));
  stats.count(TransportCounter::DrcHits, 3);
  stats.connection_opened();
  stats.reset();
  StatsSnapshot s = stats.snapshot();
  EXPECT_EQ(s.programs[0].procs[0].calls, 0u);
  EXPECT_EQ(s.programs[0].procs[0].errors, 0u);
  EXPECT_EQ(s.counter(TransportCounter::DrcHits), 0u);
  EXPECT_EQ(s.open_connections, 1);
}

TEST(StatsTable, ShowsProceduresSharesAndCounters) {
  CallStats stats;
  stats.add_program(100003, 3, "nfs", {"null", "getattr"});
  for (int i = 0; i < 3; ++i) stats.record_call(100003, 3, 1, false, microseconds(40));
  stats.record_call(100003, 3, 0, true, microseconds(2));
  stats.count(TransportCounter::DrcHits, 7);
  std::string table = admin::format_stats_table(stats.snapshot());
  EXPECT_NE(table.find("nfs (program 100003) version 3: 4 calls"), std::string::npos) << table;
  EXPECT_NE(table.find("getattr"), std::string::npos);
  EXPECT_NE(table.find("75.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("25.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("drc_hits"), std::string::npos);
  EXPECT_NE(table.find(" 7\n"), std::string::npos) << table;
}

}  // namespace
}  // namespace nasd::rpc
