// Little-endian field encoding for every on-disk structure, so the format does not depend on
// the host and no struct layout/padding rules leak into it.
#pragma once

#include <cstdint>
#include <cstring>

namespace nasd::fs::lfs {

inline void put16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v); p[1] = uint8_t(v >> 8); }
inline void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = uint8_t(v >> (8 * i));
}
inline void put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = uint8_t(v >> (8 * i));
}
inline uint16_t get16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
inline uint32_t get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}
inline uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

// Sequential writer/reader over a byte buffer; callers size buffers so that they never overrun.
class Encoder {
 public:
  explicit Encoder(uint8_t* p) : p_(p) {}
  void u8(uint8_t v) { *p_++ = v; }
  void u16(uint16_t v) { put16(p_, v); p_ += 2; }
  void u32(uint32_t v) { put32(p_, v); p_ += 4; }
  void u64(uint64_t v) { put64(p_, v); p_ += 8; }
  void bytes(const void* d, size_t n) { std::memcpy(p_, d, n); p_ += n; }
  uint8_t* pos() const { return p_; }

 private:
  uint8_t* p_;
};

class Decoder {
 public:
  explicit Decoder(const uint8_t* p) : p_(p) {}
  uint8_t u8() { return *p_++; }
  uint16_t u16() { uint16_t v = get16(p_); p_ += 2; return v; }
  uint32_t u32() { uint32_t v = get32(p_); p_ += 4; return v; }
  uint64_t u64() { uint64_t v = get64(p_); p_ += 8; return v; }
  void bytes(void* d, size_t n) { std::memcpy(d, p_, n); p_ += n; }
  const uint8_t* pos() const { return p_; }

 private:
  const uint8_t* p_;
};

}  // namespace nasd::fs::lfs
