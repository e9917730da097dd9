// CRC-32C (Castagnoli), the checksum of every NVRAM record, LFS log block and scale-out unit: it
// detects torn, stale and corrupted writes. Computed by Intel ISA-L (crc32_iscsi picks the fastest
// code for the CPU at run time); Boost.CRC is the reference the tests compare with.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nasd::util {

// The standard CRC-32C of `data` (pre- and post-inverted), continuing from `seed`, a finished CRC:
// crc32c(b, nb, crc32c(a, na)) == crc32c(a ++ b).
uint32_t crc32c(const void* data, size_t n, uint32_t seed = 0);

// The same, argument order of a running checksum: crc32c_extend(crc32c_extend(0, a), b).
inline uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n) {
  return crc32c(data, n, crc);
}

// The raw register form (no inversions), as ISA-L computes it; the scale-out on-disk formats were
// defined with it (register 0), so they keep it.
uint32_t crc32c_register(uint32_t reg, const void* data, size_t n);

// The table-driven Boost implementation, always: tests check that both paths agree.
uint32_t crc32c_portable(const void* data, size_t n, uint32_t seed = 0);

}  // namespace nasd::util
