// What FSINFO and FSSTAT said about an export at mount time: for the report, the transfer size
// cap and the free-space check. Its own header so the agent protocol can carry it without libnfs.
#pragma once

#include <cstdint>

namespace nasd::bench {

struct ServerFacts {
  uint32_t rtmax = 0, wtmax = 0, dtpref = 0;
  uint64_t maxfilesize = 0;
  uint64_t total_bytes = 0, free_bytes = 0, total_files = 0, free_files = 0;
};

}  // namespace nasd::bench
