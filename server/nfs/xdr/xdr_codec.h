// Runs rpcgen's XDR routines over byte buffers: decoding call arguments from the bytes the
// transport hands over, and appending encoded results to the reply buffer.
#pragma once

#include <rpc/rpc.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace nasd::nfs::xdr {

// An rpcgen routine for type T (`xdr_GETATTR3args` and friends).
template <typename T>
using Routine = bool_t (*)(XDR*, T*);

template <typename T>
xdrproc_t as_proc(Routine<T> routine) {
  return reinterpret_cast<xdrproc_t>(routine);
}

// Decodes `bytes` into `value` (which must be zero-filled). On failure `value` may hold partial
// allocations; the caller still frees it.
bool decode_into(xdrproc_t routine, void* value, std::span<const uint8_t> bytes);

// Appends the encoding of `value` to `out`, growing it by exactly the encoded size.
bool append_encoded(xdrproc_t routine, const void* value, std::vector<uint8_t>* out);

// True when encoding `value` again gives exactly the first bytes of `bytes` it was decoded
// from. False when decoding lost something, which for XDR strings means an embedded NUL byte:
// the decoded C string ends at it, so "a\0x" would silently become "a".
bool encodes_back_to(xdrproc_t routine, const void* value, std::span<const uint8_t> bytes);

template <typename T>
bool append(Routine<T> routine, const T& value, std::vector<uint8_t>* out) {
  return append_encoded(as_proc(routine), &value, out);
}

// One decoded argument value. Whatever XDR allocated while decoding (strings, opaque data) is
// released by the destructor, also after a failed decode.
//
// Small bounded opaque fields (file handles: at most 64 bytes) can be decoded into storage of
// this object instead (decode_inline): XDR writes into a buffer it is given rather than one it
// allocates, after checking the length against the field's bound. A GETATTR then decodes
// without touching the heap. One string whose length is known before decoding (a directory
// entry's name, read from the wire by the caller) can be decoded into this object too
// (decode_inline_string), so a LOOKUP does not touch it either.
template <typename T>
class Decoded {
 public:
  static constexpr size_t kInlineBytes = 64;
  static constexpr size_t kInlineFields = 2;
  // A name of up to 255 bytes (NAME_MAX, and the longest name a volume takes) and its NUL.
  static constexpr size_t kInlineStringBytes = 256;

  explicit Decoded(Routine<T> routine) : routine_(routine) { std::memset(&value_, 0, sizeof(T)); }
  ~Decoded() {
    // Storage of this object is not XDR's to free.
    for (size_t i = 0; i < inline_used_; ++i)
      if (*inline_fields_[i] == inline_[i]) *inline_fields_[i] = nullptr;
    if (string_field_ && *string_field_ == string_) *string_field_ = nullptr;
    xdr_free(as_proc(routine_), reinterpret_cast<char*>(&value_));
  }
  Decoded(const Decoded&) = delete;
  Decoded& operator=(const Decoded&) = delete;

  // Before decode(): `field` (the data pointer of a variable-length opaque member of the value,
  // still null) receives its bytes in this object's storage. `max_bytes` must be the bound
  // that member's XDR routine enforces; a field with a larger one, or one beyond the storage
  // for kInlineFields, is left to XDR's allocation.
  void decode_inline(char** field, size_t max_bytes) {
    if (max_bytes > kInlineBytes || inline_used_ == kInlineFields || *field != nullptr) return;
    *field = inline_[inline_used_];
    inline_fields_[inline_used_++] = field;
  }

  // Before decode(): the string member `field` (still null) is decoded into this object's
  // storage when `wire_length`, the length word XDR will read for it from the bytes given to
  // decode(), leaves room for its NUL. XDR's string routine writes length + 1 bytes into a
  // buffer it is given without knowing its size, so the caller must have read that very word:
  // any other length is left to XDR's allocation. Once per value.
  void decode_inline_string(char** field, uint32_t wire_length) {
    if (wire_length >= kInlineStringBytes || string_field_ != nullptr || *field != nullptr) return;
    *field = string_;
    string_field_ = field;
  }

  bool decode(std::span<const uint8_t> bytes) { return decode_into(as_proc(routine_), &value_, bytes); }

  bool encodes_back_to(std::span<const uint8_t> bytes) const {
    return xdr::encodes_back_to(as_proc(routine_), &value_, bytes);
  }

  T& operator*() { return value_; }
  T* operator->() { return &value_; }

 private:
  Routine<T> routine_;
  T value_;
  char inline_[kInlineFields][kInlineBytes];
  char** inline_fields_[kInlineFields] = {};
  size_t inline_used_ = 0;
  char string_[kInlineStringBytes];
  char** string_field_ = nullptr;
};

}  // namespace nasd::nfs::xdr
