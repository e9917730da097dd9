#include "cluster/scaleout/drive_compaction.h"

namespace nasd::scaleout {

int pick_drive_to_compact(const std::vector<DriveUsage>& drives, const CompactionPolicy& policy) {
  int best = -1;
  uint64_t most = 0;
  for (const DriveUsage& d : drives) {
    if (!d.healthy || d.log_bytes == 0) continue;
    if (d.garbage_bytes < policy.min_garbage_bytes) continue;
    if (double(d.garbage_bytes) < policy.min_garbage_ratio * double(d.log_bytes)) continue;
    if (best < 0 || d.garbage_bytes > most) {
      best = static_cast<int>(d.drive);
      most = d.garbage_bytes;
    }
  }
  return best;
}

}  // namespace nasd::scaleout
