#include "nvram/crc32c.h"

#include <cstring>

#include <boost/crc.hpp>

namespace nasd::nvram {

namespace {

using Castagnoli = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crc32c_hw(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t c = ~crc;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = __builtin_ia32_crc32di(c, word);
    p += 8;
    n -= 8;
  }
  auto c32 = static_cast<uint32_t>(c);
  while (n-- > 0) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return ~c32;
}

bool cpu_has_sse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

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
#if defined(__x86_64__)
  if (cpu_has_sse42()) return crc32c_hw(crc, data, n);
#endif
  return crc32c_extend_portable(crc, data, n);
}

}  // namespace nasd::nvram
