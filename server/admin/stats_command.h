// The `stats` admin command: an nfsstat-like table of the RPC server's per-procedure counts,
// shares, errors and latencies, followed by the transport counters. `stats reset` zeroes them.
#pragma once

#include <string>

#include "server/admin/command_registry.h"
#include "server/rpc/call_stats.h"

namespace nasd::admin {

// The table for one snapshot (separate from the command so that it can be tested directly).
std::string format_stats_table(const rpc::StatsSnapshot& snapshot);

// Registers `stats` and `stats reset`. `stats` must outlive the registry's use of it.
void add_stats_command(CommandRegistry& registry, rpc::CallStats& stats);

}  // namespace nasd::admin
