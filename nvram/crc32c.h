// CRC32C (Castagnoli), the checksum every NVRAM record carries. Computed by Intel ISA-L
// (crc32_iscsi: the fastest code for the CPU, chosen at run time); Boost.CRC is the reference.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nasd::nvram {

// Continues a CRC over more bytes: crc32c_extend(crc32c_extend(0, a), b) == crc32c(a ++ b).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n);

inline uint32_t crc32c(const void* data, size_t n) { return crc32c_extend(0, data, n); }

// The portable path, exposed so tests can check both paths agree.
uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t n);

}  // namespace nasd::nvram
