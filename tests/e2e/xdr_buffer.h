// Byte-level XDR (RFC 4506) for the raw-socket tests. These tests must produce messages a
// library encoder refuses to build (truncated, oversized, lying about lengths), so they compose
// the wire bytes themselves with this small writer and read replies with the reader.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nasd::e2e {

class XdrWriter {
 public:
  XdrWriter& u32(uint32_t v);
  XdrWriter& u64(uint64_t v);
  // Variable-length opaque / string: length word, bytes, zero padding to 4.
  XdrWriter& opaque(std::string_view bytes);
  // Fixed-length opaque: bytes and padding, no length word.
  XdrWriter& fixed(std::string_view bytes);
  // Appends bytes verbatim (already encoded, or deliberately malformed).
  XdrWriter& raw(std::string_view bytes);
  const std::string& bytes() const { return buf_; }

 private:
  std::string buf_;
};

class XdrError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class XdrReader {
 public:
  explicit XdrReader(std::string_view bytes) : buf_(bytes) {}
  uint32_t u32();
  uint64_t u64();
  std::string opaque(uint32_t max_len = 1u << 20);
  void skip(size_t n);
  size_t remaining() const { return buf_.size() - pos_; }
  std::string_view rest() const { return buf_.substr(pos_); }

 private:
  std::string_view buf_;
  size_t pos_ = 0;
};

}  // namespace nasd::e2e
