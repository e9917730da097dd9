// What one agent does for one coordinator: the request/reply state machine of
// agent_protocol.h on top of this host's load workers. It has no socket (agent_server.h reads
// and writes the frames), so the tests drive it with messages directly.
//
// Order: Prepare, Build, then Step/ClockProbe any number of times, then Finish; ClockProbe is
// welcome at any time. A request out of order, malformed, or that fails (a target that cannot be
// mounted, a fileset that cannot be built) gets an Error reply; after an Error that ends the
// session (malformed input, a failed Prepare/Build) the server closes the connection. Every
// exception is caught here and becomes an Error reply.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bench/agent_protocol.h"
#include "bench/benchmark.h"
#include "bench/load_worker.h"

namespace nasd::bench::agent {

class AgentSession {
 public:
  explicit AgentSession(std::string name) : name_(std::move(name)) {}
  ~AgentSession();

  // The encoded reply to one encoded request. `*close` is set when the session is over (after
  // Finished, or after an Error the session cannot go on from).
  std::vector<uint8_t> handle(std::span<const uint8_t> request, bool* close);

 private:
  enum class State { kNew, kPrepared, kBuilt, kDone };
  std::vector<uint8_t> on_prepare(const Prepare& m);
  std::vector<uint8_t> on_build();
  std::vector<uint8_t> on_step(const Step& m);
  std::vector<uint8_t> on_finish(const Finish& m);

  std::string name_;
  State state_ = State::kNew;
  RunConfig config_;
  FilesetShape shape_;
  std::vector<std::unique_ptr<LoadWorker>> workers_;
  uint64_t refused_before_ = 0;
  int64_t next_step_ = 0;
};

}  // namespace nasd::bench::agent
