#include "tests/e2e/xdr_buffer.h"

namespace nasd::e2e {
namespace {
size_t padding(size_t n) { return (4 - n % 4) % 4; }
}  // namespace

XdrWriter& XdrWriter::u32(uint32_t v) {
  char b[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
               static_cast<char>(v)};
  buf_.append(b, 4);
  return *this;
}

XdrWriter& XdrWriter::u64(uint64_t v) {
  u32(static_cast<uint32_t>(v >> 32));
  return u32(static_cast<uint32_t>(v));
}

XdrWriter& XdrWriter::opaque(std::string_view bytes) {
  u32(static_cast<uint32_t>(bytes.size()));
  return fixed(bytes);
}

XdrWriter& XdrWriter::fixed(std::string_view bytes) {
  buf_.append(bytes);
  buf_.append(padding(bytes.size()), '\0');
  return *this;
}

XdrWriter& XdrWriter::raw(std::string_view bytes) {
  buf_.append(bytes);
  return *this;
}

uint32_t XdrReader::u32() {
  if (remaining() < 4) throw XdrError("XDR: reply truncated reading a 32-bit word");
  auto b = reinterpret_cast<const unsigned char*>(buf_.data() + pos_);
  pos_ += 4;
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
}

uint64_t XdrReader::u64() {
  uint64_t hi = u32();
  return (hi << 32) | u32();
}

std::string XdrReader::opaque(uint32_t max_len) {
  uint32_t len = u32();
  if (len > max_len) throw XdrError("XDR: opaque of " + std::to_string(len) + " bytes");
  if (remaining() < len + padding(len)) throw XdrError("XDR: reply truncated inside an opaque");
  std::string out(buf_.substr(pos_, len));
  pos_ += len + padding(len);
  return out;
}

void XdrReader::skip(size_t n) {
  if (remaining() < n) throw XdrError("XDR: reply truncated");
  pos_ += n;
}

}  // namespace nasd::e2e
