// Every NVRAM record carries CRC-32C from util/crc32c.h.
#pragma once

#include "util/crc32c.h"

namespace nasd::nvram {
using util::crc32c;
using util::crc32c_extend;
inline uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t n) {
  return util::crc32c_portable(data, n, crc);
}
}  // namespace nasd::nvram
