// CRC-32C over on-disk structures (Boost.CRC); detects torn and stale writes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nasd::fs::lfs {

uint32_t crc32c(const void* data, size_t n, uint32_t seed = 0);

}  // namespace nasd::fs::lfs
