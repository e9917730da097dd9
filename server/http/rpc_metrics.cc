#include "server/http/rpc_metrics.h"

#include <cctype>

namespace nasd::http {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

MetricFamilies rpc_metric_families(const rpc::StatsSnapshot& snapshot) {
  MetricFamilies m;
  size_t calls = m.counter("nasd_rpc_calls_total", "RPC calls answered, per procedure");
  size_t errors = m.counter("nasd_rpc_errors_total",
                            "RPC calls answered with an RPC-level error (not an NFS status)");
  size_t duration = m.histogram("nasd_rpc_call_duration_seconds",
                                "Time from receiving a call to its reply being ready");
  size_t req = m.counter("nasd_rpc_request_bytes_total",
                         "Argument bytes of the calls (WRITE: the data written)");
  size_t rep = m.counter("nasd_rpc_reply_bytes_total",
                         "Result bytes of the replies (READ: the data read)");
  const auto bounds = power_of_two_bounds_seconds(rpc::kLatencyBuckets, 1);
  for (const auto& prog : snapshot.programs) {
    for (const auto& p : prog.procs) {
      Labels l{{"program", lower(prog.name)},
               {"version", std::to_string(prog.vers)},
               {"procedure", lower(p.name)}};
      m.add(calls, l, double(p.calls));
      m.add(errors, l, double(p.errors));
      m.add(req, l, double(p.request_bytes));
      m.add(rep, l, double(p.reply_bytes));
      std::vector<uint64_t> counts(p.buckets.begin(), p.buckets.end());
      m.add_histogram(duration, l, bounds, counts, double(p.latency_sum_us) * 1e-6);
    }
  }
  size_t open = m.gauge("nasd_rpc_connections_open", "TCP connections open now");
  m.add(open, {}, double(snapshot.open_connections));
  size_t events = m.counter("nasd_rpc_transport_events_total",
                            "Transport events (records, datagrams, rejections, cache hits)");
  size_t received = m.counter("nasd_rpc_received_bytes_total", "Bytes received from clients");
  size_t sent = m.counter("nasd_rpc_sent_bytes_total", "Bytes sent to clients");
  for (size_t i = 0; i < rpc::kTransportCounters; ++i) {
    auto c = static_cast<rpc::TransportCounter>(i);
    double v = double(snapshot.counter(c));
    if (c == rpc::TransportCounter::BytesReceived)
      m.add(received, {}, v);
    else if (c == rpc::TransportCounter::BytesSent)
      m.add(sent, {}, v);
    else
      m.add(events, {{"event", std::string(rpc::transport_counter_name(c))}}, v);
  }
  return m;
}

void write_rpc_json(JsonWriter& out, const rpc::StatsSnapshot& snapshot) {
  out.key("rpc").begin_object();
  out.key("programs").begin_array();
  for (const auto& prog : snapshot.programs) {
    out.begin_object().field("name", prog.name).field("version", prog.vers);
    out.key("procs").begin_array();
    for (const auto& p : prog.procs) {
      out.begin_object()
          .field("name", p.name)
          .field("calls", p.calls)
          .field("errors", p.errors)
          .field("latency_sum_us", p.latency_sum_us)
          .field("p50_us", p.percentile_us(0.5))
          .field("p99_us", p.percentile_us(0.99))
          .field("request_bytes", p.request_bytes)
          .field("reply_bytes", p.reply_bytes)
          .end_object();
    }
    out.end_array().end_object();
  }
  out.end_array();
  out.key("transport").begin_object();
  out.field("connections_open", int64_t{snapshot.open_connections});
  for (size_t i = 0; i < rpc::kTransportCounters; ++i) {
    auto c = static_cast<rpc::TransportCounter>(i);
    out.field(rpc::transport_counter_name(c), snapshot.counter(c));
  }
  out.end_object().end_object();
}

}  // namespace nasd::http
