// A copy of an NVRAM region image that holds what a recovery would replay from it, without the
// rest of the log: the header page and the log from the stored head to the end of the valid
// records (what Journal::recover_from_region scans: every record whose CRC, position and epoch
// hold, which reaches at least the stored tail), at the same positions. The rest of the copy is
// a hole, which reads as zeros and so ends a scan exactly where the original's scan ends.
//
// Why: a takeover copies its mirror of the dead node's NVRAM before replaying it (the mirror
// itself stays what the partner knows it holds). The image is as large as the partner's
// NVRAM (hundreds of MiB once the log has wrapped) while the live records are usually a few
// MiB, and copying the whole image was most of the time from the lease to serving.
#pragma once

#include <cstdint>
#include <string>

namespace nasd::nvram {

struct LiveCopyStats {
  uint64_t region_size = 0;  // the image's size (the copy has the same size, mostly holes)
  uint64_t copied = 0;       // bytes written: the header page and the live log
  uint64_t head = 0, end = 0;  // the log positions copied, [head, end)
};

// Replaces `to` with such a copy of the region `from` (which nobody writes meanwhile), fsynced.
// False and *error on failure (no region there, I/O error).
bool copy_live_region(const std::string& from, const std::string& to, LiveCopyStats* stats,
                      std::string* error);

}  // namespace nasd::nvram
