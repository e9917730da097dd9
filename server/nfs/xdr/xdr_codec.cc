#include "server/nfs/xdr/xdr_codec.h"

#include <cstring>
#include <optional>

namespace nasd::nfs::xdr {
namespace {

// Encodes `value` into `out`: the bytes written, or nothing when the encoding fails or does not
// fit in `out`.
std::optional<size_t> encode_into(xdrproc_t routine, const void* value, std::span<uint8_t> out) {
  XDR stream;
  xdrmem_create(&stream, reinterpret_cast<char*>(out.data()), static_cast<u_int>(out.size()),
                XDR_ENCODE);
  const bool ok = routine(&stream, const_cast<void*>(value));  // XDR_ENCODE only reads it
  const size_t written = ok ? xdr_getpos(&stream) : 0;
  xdr_destroy(&stream);
  if (!ok) return std::nullopt;
  return written;
}

}  // namespace

bool decode_into(xdrproc_t routine, void* value, std::span<const uint8_t> bytes) {
  XDR stream;
  // XDR_DECODE only reads through the pointer; the API just is not const-correct.
  xdrmem_create(&stream, reinterpret_cast<char*>(const_cast<uint8_t*>(bytes.data())),
                static_cast<u_int>(bytes.size()), XDR_DECODE);
  bool ok = routine(&stream, value);
  xdr_destroy(&stream);
  return ok;
}

bool append_encoded(xdrproc_t routine, const void* value, std::vector<uint8_t>* out) {
  // xdr_sizeof reports 0 both for an empty encoding and for a failure; the encode below tells.
  const size_t size = xdr_sizeof(routine, const_cast<void*>(value));
  const size_t start = out->size();
  out->resize(start + size);
  const std::optional<size_t> written =
      encode_into(routine, value, std::span<uint8_t>(out->data() + start, size));
  out->resize(start + written.value_or(0));
  return written.has_value();
}

bool encodes_back_to(xdrproc_t routine, const void* value, std::span<const uint8_t> bytes) {
  // Encoded into a buffer of bytes.size(): an encoding that does not fit fails, and one that
  // does is compared with the bytes it must begin. Arguments of the usual size are encoded into
  // this thread's scratch buffer, so the check allocates nothing; a large one (a WRITE's data)
  // gets a buffer of its own rather than pinning its size to the thread.
  constexpr size_t kScratchBytes = 64 * 1024;
  thread_local std::vector<uint8_t> scratch;
  std::vector<uint8_t> large;
  std::vector<uint8_t>& again = bytes.size() <= kScratchBytes ? scratch : large;
  if (again.size() < bytes.size()) again.resize(bytes.size());
  const std::optional<size_t> written =
      encode_into(routine, value, std::span<uint8_t>(again.data(), bytes.size()));
  return written && *written <= bytes.size() &&
         (*written == 0 || std::memcmp(again.data(), bytes.data(), *written) == 0);
}

}  // namespace nasd::nfs::xdr
