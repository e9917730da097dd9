// Which targets a load-generating process sends its requests to. By default every process
// mounts every target and rotates over them request by request (the uniform access rule of a
// clustered SPECsfs result). With --targets, process i uses target i mod T only: the dataflow
// of the SFS2014 reference report ("as the load scaled up, each additional process used the
// next node"), so the first processes land on node 1, the next on node 2, and so on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nasd::bench {

// Indexes into the run's targets for process `process`; T must be > 0.
std::vector<size_t> targets_of_process(size_t process, size_t targets, bool per_process);

// Processes of `processes` that use target `target`.
size_t processes_on_target(size_t target, size_t targets, size_t processes, bool per_process);

}  // namespace nasd::bench
