#include "fs/lfs/checksum.h"

#include <boost/crc.hpp>

namespace nasd::fs::lfs {

uint32_t crc32c(const void* data, size_t n, uint32_t seed) {
  // Castagnoli polynomial, reflected, as used by iSCSI/ext4; `seed` chains calls.
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc(seed ^ 0xFFFFFFFF);
  crc.process_bytes(data, n);
  return crc.checksum();
}

}  // namespace nasd::fs::lfs
