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
template <typename T>
class Decoded {
 public:
  explicit Decoded(Routine<T> routine) : routine_(routine) { std::memset(&value_, 0, sizeof(T)); }
  ~Decoded() { xdr_free(as_proc(routine_), reinterpret_cast<char*>(&value_)); }
  Decoded(const Decoded&) = delete;
  Decoded& operator=(const Decoded&) = delete;

  bool decode(std::span<const uint8_t> bytes) { return decode_into(as_proc(routine_), &value_, bytes); }

  bool encodes_back_to(std::span<const uint8_t> bytes) const {
    return xdr::encodes_back_to(as_proc(routine_), &value_, bytes);
  }

  T& operator*() { return value_; }
  T* operator->() { return &value_; }

 private:
  Routine<T> routine_;
  T value_;
};

}  // namespace nasd::nfs::xdr
