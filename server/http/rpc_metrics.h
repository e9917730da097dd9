// The RPC server's statistics (server/rpc/call_stats.h) as Prometheus families and as the
// management page's JSON: per procedure calls, errors, latency histogram and argument/result
// bytes; transport counters. Both views read one snapshot, the one `nasd-admin stats` prints.
#pragma once

#include "server/http/json_writer.h"
#include "server/http/metric_families.h"
#include "server/rpc/call_stats.h"

namespace nasd::http {

// nasd_rpc_calls_total, nasd_rpc_errors_total, nasd_rpc_call_duration_seconds,
// nasd_rpc_request_bytes_total, nasd_rpc_reply_bytes_total {program, version, procedure};
// nasd_rpc_connections_open; nasd_rpc_transport_events_total {event};
// nasd_rpc_received_bytes_total, nasd_rpc_sent_bytes_total.
MetricFamilies rpc_metric_families(const rpc::StatsSnapshot& snapshot);

// "rpc": {"programs": [{"name", "version", "procs": [{"name", "calls", "errors",
// "latency_sum_us", "p50_us", "p99_us", "request_bytes", "reply_bytes"}]}], "transport": {...}}
void write_rpc_json(JsonWriter& out, const rpc::StatsSnapshot& snapshot);

}  // namespace nasd::http
