// The log's blocks, summaries and checkpoints carry CRC-32C from util/crc32c.h.
#pragma once

#include "util/crc32c.h"

namespace nasd::fs::lfs {
using util::crc32c;
using util::crc32c_portable;
}  // namespace nasd::fs::lfs
