#include "fs/lfs/checksum.h"

#include <cstring>

#include <boost/crc.hpp>
#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace nasd::fs::lfs {

namespace {

// Castagnoli polynomial, reflected, as used by iSCSI/ext4. `state` is the raw register.
uint32_t crc_portable(const void* data, size_t n, uint32_t state) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0, true, true> crc(state);
  crc.process_bytes(data, n);
  return crc.checksum();
}

#if defined(__x86_64__)
// SSE4.2 has CRC-32C in hardware: ~20x faster than a table, and every log block is checksummed.
__attribute__((target("sse4.2"))) uint32_t crc_sse42(const void* data, size_t n, uint32_t state) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint64_t c = state;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
  }
  uint32_t c32 = uint32_t(c);
  for (; n > 0; n--) c32 = _mm_crc32_u8(c32, *p++);
  return c32;
}
const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
#endif

}  // namespace

uint32_t crc32c_portable(const void* data, size_t n, uint32_t seed) {
  return crc_portable(data, n, seed ^ 0xFFFFFFFF) ^ 0xFFFFFFFF;
}

uint32_t crc32c(const void* data, size_t n, uint32_t seed) {
#if defined(__x86_64__)
  if (kHaveSse42) return crc_sse42(data, n, seed ^ 0xFFFFFFFF) ^ 0xFFFFFFFF;
#endif
  return crc32c_portable(data, n, seed);
}

}  // namespace nasd::fs::lfs
