// CRC-32C over on-disk structures; detects torn and stale writes. Uses the SSE4.2 instruction
// when the CPU has it, Boost.CRC otherwise (same values).
#pragma once

#include <cstddef>
#include <cstdint>

namespace nasd::fs::lfs {

uint32_t crc32c(const void* data, size_t n, uint32_t seed = 0);
// The table-driven implementation, always (tests compare the two).
uint32_t crc32c_portable(const void* data, size_t n, uint32_t seed = 0);

}  // namespace nasd::fs::lfs
