// Little-endian, fixed-width byte encoding shared by every binary format of the project: the
// Volume call codec (interconnect frames and NVRAM journal records), the interconnect's hello
// and heartbeat messages. The writer appends; the reader never reads past its span and turns the
// first malformed field into a sticky error, so a decoder reads a whole message and checks once:
// a bad message is an error with a reason, never a crash or an allocation sized by the sender.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nasd::util {

class ByteWriter {
 public:
  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v) { put_le(v, 2); }
  void u32(uint32_t v) { put_le(v, 4); }
  void u64(uint64_t v) { put_le(v, 8); }
  void i64(int64_t v) { put_le(static_cast<uint64_t>(v), 8); }
  void boolean(bool v) { u8(v ? 1 : 0); }
  // u32 length, then the bytes.
  void bytes(std::span<const uint8_t> b);
  void string(std::string_view s);
  // The bytes themselves, without a length (the caller framed them).
  void raw(std::span<const uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }

  size_t size() const { return out_.size(); }
  void clear() { out_.clear(); }
  const std::vector<uint8_t>& data() const { return out_; }
  std::vector<uint8_t> take() { return std::move(out_); }

 private:
  void put_le(uint64_t v, int width);
  std::vector<uint8_t> out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> in) : in_(in) {}

  // Each returns false (and leaves *out alone) once the reader has failed.
  bool u8(uint8_t* out);
  bool u16(uint16_t* out);
  bool u32(uint32_t* out);
  bool u64(uint64_t* out);
  bool i64(int64_t* out);
  bool boolean(bool* out);  // only 0 or 1
  // Views into the input (no copy): valid while the input buffer is. A length above `max_len`
  // is an error before anything is sized from it.
  bool bytes(std::span<const uint8_t>* out, size_t max_len);
  bool string(std::string_view* out, size_t max_len);
  // The next `n` bytes, without a length prefix.
  bool raw(size_t n, std::span<const uint8_t>* out);

  // Records the first failure; always returns false so callers can `return r.fail(...)`.
  bool fail(std::string what);
  // Fails unless every byte was consumed (trailing garbage is malformed too).
  bool expect_end();

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  size_t remaining() const { return in_.size() - pos_; }
  size_t position() const { return pos_; }

 private:
  bool take(size_t n, const uint8_t** p);
  bool get_le(uint64_t* v, int width);

  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace nasd::util
