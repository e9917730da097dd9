#include "bench/process_targets.h"

namespace nasd::bench {

std::vector<size_t> targets_of_process(size_t process, size_t targets, bool per_process) {
  std::vector<size_t> out;
  if (targets == 0) return out;
  if (per_process) {
    out.push_back(process % targets);
    return out;
  }
  for (size_t t = 0; t < targets; ++t) out.push_back(t);
  return out;
}

size_t processes_on_target(size_t target, size_t targets, size_t processes, bool per_process) {
  if (targets == 0 || target >= targets) return 0;
  if (!per_process) return processes;
  // Processes target, target + T, target + 2T, ... below `processes`.
  return target < processes ? (processes - target - 1) / targets + 1 : 0;
}

}  // namespace nasd::bench
