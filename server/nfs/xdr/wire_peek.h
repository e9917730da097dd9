// Reading a few words of a call's XDR arguments in place, before they are decoded: where a
// WRITE's payload starts, how long a LOOKUP's name is, whose handle a call names. Nothing read
// here is trusted: the arguments are decoded and checked as usual afterwards. Every read is
// bounds-checked and answers nullopt past the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "server/nfs/xdr/nfs3_prot.h"

namespace nasd::nfs::xdr {

// The big-endian 32-bit word at `at`.
inline std::optional<uint32_t> peek_word(std::span<const uint8_t> bytes, size_t at) {
  if (at > bytes.size() || bytes.size() - at < 4) return std::nullopt;
  return (uint32_t{bytes[at]} << 24) | (uint32_t{bytes[at + 1]} << 16) |
         (uint32_t{bytes[at + 2]} << 8) | uint32_t{bytes[at + 3]};
}

// The bytes of the nfs_fh3 that starts `bytes` (a length of at most NFS3_FHSIZE, then the
// handle), and where what follows it starts (the handle padded to 4).
struct LeadingHandle {
  std::span<const uint8_t> handle;
  size_t end = 0;
};
inline std::optional<LeadingHandle> peek_leading_handle(std::span<const uint8_t> bytes) {
  const std::optional<uint32_t> length = peek_word(bytes, 0);
  if (!length || *length > NFS3_FHSIZE || bytes.size() - 4 < *length) return std::nullopt;
  return LeadingHandle{bytes.subspan(4, *length), 4 + (size_t{*length} + 3) / 4 * 4};
}

}  // namespace nasd::nfs::xdr
