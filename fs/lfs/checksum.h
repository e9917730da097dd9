// CRC-32C over on-disk structures; detects torn and stale writes. Computed by Intel ISA-L
// (crc32_iscsi, the fastest code for the CPU); Boost.CRC is the reference the tests compare with.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nasd::fs::lfs {

uint32_t crc32c(const void* data, size_t n, uint32_t seed = 0);
// The table-driven implementation, always (tests compare the two).
uint32_t crc32c_portable(const void* data, size_t n, uint32_t seed = 0);

}  // namespace nasd::fs::lfs
