// Running one step of a run on every load worker at once, one thread each: shared by the
// single-host run (benchmark.cc) and an agent of a many-host run (agent_session.cc).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/load_worker.h"

namespace nasd::bench {

// Runs `fn(worker, &error)` on one thread per worker and joins them. The first failure (false,
// or an exception, which never escapes a thread) is thrown as RunError.
void for_each_worker(std::vector<std::unique_ptr<LoadWorker>>& workers,
                     const std::function<bool(LoadWorker&, std::string*)>& fn);

}  // namespace nasd::bench
