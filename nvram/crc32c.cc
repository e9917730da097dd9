#include "nvram/crc32c.h"

#include <cstring>

#include <boost/crc.hpp>
#include <isa-l/crc.h>

namespace nasd::nvram {

namespace {

using Castagnoli = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;

// ISA-L's crc32_iscsi is the register form (no pre/post inversion) and picks the fastest code
// for the CPU at run time: on x86 three interleaved crc32 streams folded with PCLMULQDQ, ~6x the
// single dependent chain of crc32 instructions this used before (the NVRAM record checksum was
// 7% of a sequential 1 MiB WRITE's CPU). Its length is an int: long buffers go in pieces.
uint32_t crc32c_isal(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t reg = ~crc;
  constexpr size_t kPiece = size_t(1) << 30;
  while (n > 0) {
    const size_t piece = n < kPiece ? n : kPiece;
    reg = crc32_iscsi(const_cast<uint8_t*>(p), int(piece), reg);
    p += piece;
    n -= piece;
  }
  return ~reg;
}

}  // namespace

uint32_t crc32c_extend_portable(uint32_t crc, const void* data, size_t n) {
  // Boost takes the initial remainder un-reflected, while a finished reflected CRC is stored
  // reflected; un-reflect ~crc to continue from it.
  uint32_t rem = ~crc, unreflected = 0;
  for (int i = 0; i < 32; ++i) unreflected |= ((rem >> i) & 1u) << (31 - i);
  Castagnoli c(unreflected);
  c.process_bytes(data, n);
  return c.checksum();
}

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n) {
  return crc32c_isal(crc, data, n);
}

}  // namespace nasd::nvram
