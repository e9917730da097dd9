#include "server/nfs/xdr/xdr_codec.h"

namespace nasd::nfs::xdr {

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
  void* mutable_value = const_cast<void*>(value);  // XDR_ENCODE does not modify the value
  // xdr_sizeof reports 0 both for an empty encoding and for a failure; the encode below tells.
  const size_t size = xdr_sizeof(routine, mutable_value);
  const size_t start = out->size();
  out->resize(start + size);
  XDR stream;
  xdrmem_create(&stream, reinterpret_cast<char*>(out->data() + start), static_cast<u_int>(size),
                XDR_ENCODE);
  bool ok = routine(&stream, mutable_value);
  const size_t written = ok ? xdr_getpos(&stream) : 0;
  xdr_destroy(&stream);
  out->resize(start + written);
  return ok;
}

bool encodes_back_to(xdrproc_t routine, const void* value, std::span<const uint8_t> bytes) {
  std::vector<uint8_t> again;
  if (!append_encoded(routine, value, &again)) return false;
  return again.size() <= bytes.size() && std::memcmp(again.data(), bytes.data(), again.size()) == 0;
}

}  // namespace nasd::nfs::xdr
