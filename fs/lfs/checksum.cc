#include "fs/lfs/checksum.h"

#include <cstring>

#include <boost/crc.hpp>
#include <isa-l/crc.h>

namespace nasd::fs::lfs {

namespace {

// Castagnoli polynomial, reflected, as used by iSCSI/ext4. `state` is the raw register.
uint32_t crc_portable(const void* data, size_t n, uint32_t state) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0, true, true> crc(state);
  crc.process_bytes(data, n);
  return crc.checksum();
}

// ISA-L's crc32_iscsi works on the raw register and picks the fastest code for the CPU at run
// time (three interleaved crc32 streams folded with PCLMULQDQ on x86): every log block is
// checksummed, and the single dependent chain of crc32 instructions used before cost several
// times more. Its length is an int: long buffers go in pieces.
uint32_t crc_isal(const void* data, size_t n, uint32_t state) {
  const auto* p = static_cast<const uint8_t*>(data);
  constexpr size_t kPiece = size_t(1) << 30;
  while (n > 0) {
    const size_t piece = n < kPiece ? n : kPiece;
    state = crc32_iscsi(const_cast<uint8_t*>(p), int(piece), state);
    p += piece;
    n -= piece;
  }
  return state;
}

}  // namespace

uint32_t crc32c_portable(const void* data, size_t n, uint32_t seed) {
  return crc_portable(data, n, seed ^ 0xFFFFFFFF) ^ 0xFFFFFFFF;
}

uint32_t crc32c(const void* data, size_t n, uint32_t seed) {
  return crc_isal(data, n, seed ^ 0xFFFFFFFF) ^ 0xFFFFFFFF;
}

}  // namespace nasd::fs::lfs
