// A many-host run: the coordinator drives `nasd-loadgen agent`s on the hosts of a hosts file
// (agent_hosts.h) and turns what they measured into the same RunResult (so the same report, CSV
// and plot) a single-host run produces.
//
//   1. Connect to every agent and run the handshake with the agent key (agent_channel.h).
//   2. Prepare: each agent gets its targets by the round-robin rule, the run's processes, mix,
//      sizes and its own workdir and seed; it mounts its targets and answers with FSSTAT.
//   3. The fileset check: per target, the bytes all agents on it will create (+5%) against its
//      free space, before anything is created.
//   4. Build: every agent builds its part of the fileset.
//   5. Each step is a barrier: the coordinator measures every agent's clock offset (the probe
//      with the smallest round trip of a few, NTP-style), picks one start time a little ahead,
//      sends each agent that instant on its own monotonic clock with its share of the step's
//      load, and waits for every agent's results before the next step begins. Agents need no
//      synchronised wall clocks; the start error is about half the probe round trip.
//   6. Finish (with --cleanup each agent removes its fileset); the results are merged
//      (agent_merge.h).
// Any agent failing (unreachable, wrong key, an Error reply, a lost connection) fails the run
// with a RunError naming it; the connections close and every agent drops its load workers.
#pragma once

#include <vector>

#include "bench/agent_hosts.h"
#include "bench/benchmark.h"
#include "util/link_handshake.h"

namespace nasd::bench {

// Throws RunError. `credentials.self` is the coordinator's name in the handshake.
RunResult run_distributed(const RunConfig& config, const std::vector<AgentHost>& hosts,
                          const link::Credentials& credentials, const ProgressFn& progress);

}  // namespace nasd::bench
