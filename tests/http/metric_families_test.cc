#include "server/http/metric_families.h"

#include <gtest/gtest.h>

#include "server/http/rpc_metrics.h"

namespace nasd::http {
namespace {

TEST(MetricFamilies, EnforcesTheNamingConventions) {
  MetricFamilies m;
  EXPECT_THROW(m.counter("rpc_calls_total", "no prefix"), std::invalid_argument);
  EXPECT_THROW(m.counter("nasd_rpc_calls", "counter without _total"), std::invalid_argument);
  EXPECT_THROW(m.gauge("nasd_used_total", "gauge with _total"), std::invalid_argument);
  EXPECT_THROW(m.gauge("nasd_bad-name", "dash"), std::invalid_argument);
  size_t g = m.gauge("nasd_used_bytes", "fine");
  EXPECT_THROW(m.gauge("nasd_used_bytes", "twice"), std::invalid_argument);
  EXPECT_THROW(m.add(g, {{"bad-label", "x"}}, 1), std::invalid_argument);
}

TEST(MetricFamilies, WritesTheTextFormatWithCumulativeBuckets) {
  MetricFamilies m;
  size_t c = m.counter("nasd_things_total", "Things");
  m.add(c, {{"volume", "v\"0"}}, 3);
  size_t h = m.histogram("nasd_wait_seconds", "Waits");
  m.add_histogram(h, {}, {0.001, 0.002}, {2, 3}, 0.005);
  std::string t = m.text();
  EXPECT_NE(t.find("# TYPE nasd_things_total counter"), std::string::npos) << t;
  EXPECT_NE(t.find("nasd_things_total{volume=\"v\\\"0\"} 3"), std::string::npos) << t;
  EXPECT_NE(t.find("nasd_wait_seconds_bucket{le=\"0.001\"} 2"), std::string::npos) << t;
  EXPECT_NE(t.find("nasd_wait_seconds_bucket{le=\"0.002\"} 5"), std::string::npos) << t;
  EXPECT_NE(t.find("nasd_wait_seconds_bucket{le=\"+Inf\"} 5"), std::string::npos) << t;
  EXPECT_NE(t.find("nasd_wait_seconds_count 5"), std::string::npos) << t;
  EXPECT_NE(t.find("nasd_wait_seconds_sum 0.005"), std::string::npos) << t;
}

TEST(RpcMetrics, ProceduresBecomeLabelsAndMicrosecondsSeconds) {
  rpc::CallStats stats;
  stats.add_program(100003, 3, "NFS", {"NULL", "GETATTR"});
  stats.record_call(100003, 3, 1, false, std::chrono::microseconds(100), 40, 120);
  stats.record_call(100003, 3, 1, true, std::chrono::microseconds(300), 40, 0);
  std::string t = rpc_metric_families(stats.snapshot()).text();
  const std::string l = "{program=\"nfs\",version=\"3\",procedure=\"getattr\"}";
  EXPECT_NE(t.find("nasd_rpc_calls_total" + l + " 2"), std::string::npos) << t;
  EXPECT_NE(t.find("nasd_rpc_errors_total" + l + " 1"), std::string::npos) << t;
  EXPECT_NE(t.find("nasd_rpc_request_bytes_total" + l + " 80"), std::string::npos) << t;
  EXPECT_NE(t.find("nasd_rpc_reply_bytes_total" + l + " 120"), std::string::npos) << t;
  EXPECT_NE(t.find("nasd_rpc_call_duration_seconds_sum" + l + " 0.0004"), std::string::npos) << t;
  // 100 us lies in [64, 128) us: the bucket whose upper bound is 128 us.
  EXPECT_NE(t.find("nasd_rpc_call_duration_seconds_bucket{program=\"nfs\",version=\"3\","
                   "procedure=\"getattr\",le=\"0.000128\"} 1"),
            std::string::npos)
      << t;
}

}  // namespace
}  // namespace nasd::http
