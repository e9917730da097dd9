#include "server/admin/stats_command.h"

#include <cstdio>
#include <stdexcept>

namespace nasd::admin {
namespace {

std::string line(const char* fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

}  // namespace

std::string format_stats_table(const rpc::StatsSnapshot& snapshot) {
  std::string out;
  for (const auto& prog : snapshot.programs) {
    uint64_t total = 0;
    for (const auto& p : prog.procs) total += p.calls;
    out += line("%s (program %u) version %u: %llu calls\n", prog.name.c_str(), prog.prog,
                prog.vers, static_cast<unsigned long long>(total));
    out += line("  %-14s %12s %7s %9s %10s %10s %10s\n", "procedure", "calls", "%", "errors",
                "mean_us", "p50_us", "p99_us");
    for (const auto& p : prog.procs) {
      double share = total ? 100.0 * double(p.calls) / double(total) : 0.0;
      out += line("  %-14s %12llu %6.1f%% %9llu %10.1f %10.1f %10.1f\n", p.name.c_str(),
                  static_cast<unsigned long long>(p.calls), share,
                  static_cast<unsigned long long>(p.errors), p.mean_us(), p.percentile_us(0.50),
                  p.percentile_us(0.99));
    }
    out += "\n";
  }
  out += "transport\n";
  out += line("  %-22s %12lld\n", "connections_open",
              static_cast<long long>(snapshot.open_connections));
  for (size_t i = 0; i < rpc::kTransportCounters; ++i) {
    auto c = static_cast<rpc::TransportCounter>(i);
    out += line("  %-22s %12llu\n", std::string(rpc::transport_counter_name(c)).c_str(),
                static_cast<unsigned long long>(snapshot.counter(c)));
  }
  return out;
}

void add_stats_command(CommandRegistry& registry, rpc::CallStats& stats) {
  registry.add_command(
      "stats", "per-procedure RPC calls, errors and latency; 'stats reset' zeroes them",
      [&stats](const std::vector<std::string>& args) -> std::string {
        if (args.empty()) return format_stats_table(stats.snapshot());
        if (args.size() == 1 && args[0] == "reset") {
          stats.reset();
          return "statistics reset\n";
        }
        throw std::invalid_argument("usage: stats [reset]");
      });
}

}  // namespace nasd::admin
