#include "util/byte_io.h"

namespace nasd::util {

void ByteWriter::put_le(uint64_t v, int width) {
  for (int i = 0; i < width; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void ByteWriter::bytes(std::span<const uint8_t> b) {
  u32(static_cast<uint32_t>(b.size()));
  out_.insert(out_.end(), b.begin(), b.end());
}

void ByteWriter::string(std::string_view s) {
  bytes({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
}

bool ByteReader::fail(std::string what) {
  if (error_.empty()) error_ = std::move(what);
  return false;
}

bool ByteReader::take(size_t n, const uint8_t** p) {
  if (!ok()) return false;
  if (n > remaining()) {
    return fail("truncated: need " + std::to_string(n) + " bytes at offset " +
                std::to_string(pos_) + ", have " + std::to_string(remaining()));
  }
  *p = in_.data() + pos_;
  pos_ += n;
  return true;
}

bool ByteReader::get_le(uint64_t* v, int width) {
  const uint8_t* p;
  if (!take(width, &p)) return false;
  uint64_t r = 0;
  for (int i = 0; i < width; ++i) r |= static_cast<uint64_t>(p[i]) << (8 * i);
  *v = r;
  return true;
}

bool ByteReader::u8(uint8_t* out) {
  uint64_t v;
  if (!get_le(&v, 1)) return false;
  *out = static_cast<uint8_t>(v);
  return true;
}

bool ByteReader::u16(uint16_t* out) {
  uint64_t v;
  if (!get_le(&v, 2)) return false;
  *out = static_cast<uint16_t>(v);
  return true;
}

bool ByteReader::u32(uint32_t* out) {
  uint64_t v;
  if (!get_le(&v, 4)) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

bool ByteReader::u64(uint64_t* out) { return get_le(out, 8); }

bool ByteReader::i64(int64_t* out) {
  uint64_t v;
  if (!get_le(&v, 8)) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

bool ByteReader::boolean(bool* out) {
  uint8_t v;
  if (!u8(&v)) return false;
  if (v > 1) return fail("boolean out of range: " + std::to_string(v));
  *out = v == 1;
  return true;
}

bool ByteReader::bytes(std::span<const uint8_t>* out, size_t max_len) {
  uint32_t n;
  if (!u32(&n)) return false;
  // Checked before anything is sized from it: a garbage length is rejected, never allocated.
  if (n > max_len) {
    return fail("length " + std::to_string(n) + " exceeds limit " + std::to_string(max_len));
  }
  const uint8_t* p;
  if (!take(n, &p)) return false;
  *out = {p, n};
  return true;
}

bool ByteReader::string(std::string_view* out, size_t max_len) {
  std::span<const uint8_t> b;
  if (!bytes(&b, max_len)) return false;
  *out = {reinterpret_cast<const char*>(b.data()), b.size()};
  return true;
}

bool ByteReader::raw(size_t n, std::span<const uint8_t>* out) {
  const uint8_t* p;
  if (!take(n, &p)) return false;
  *out = {p, n};
  return true;
}

bool ByteReader::expect_end() {
  if (!ok()) return false;
  if (remaining() != 0) return fail(std::to_string(remaining()) + " trailing bytes");
  return true;
}

}  // namespace nasd::util
