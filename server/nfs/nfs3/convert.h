// Conversions between the rpcgen wire structures (nfs3_prot.x) and the fs::Volume types.
// Kept in one place so every procedure encodes attributes, WCC data and times the same way.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>

#include "fs/volume.h"
#include "server/nfs/handle/handle_codec.h"
#include "server/nfs/xdr/nfs3_prot.h"

namespace nasd::nfs::nfs3 {

// The number an rpcgen enum field holds. xdr_enum stores whatever the client sent, and in C++
// reading an out-of-range value through the enum type is undefined, so fields straight from
// the wire (stable_how, time_how, the MKNOD type) are read as plain integers.
template <typename E>
uint32_t raw_enum(const E& field) {
  static_assert(sizeof(E) == sizeof(uint32_t));
  uint32_t v;
  std::memcpy(&v, &field, sizeof v);
  return v;
}

// fs::Status uses the nfsstat3 numbers, so this is a plain cast.
inline nfsstat3 to_nfsstat(fs::Status s) { return static_cast<nfsstat3>(s); }

nfstime3 to_nfstime(const fs::Time& t);
fs::Time from_nfstime(const nfstime3& t);

fattr3 to_fattr(const fs::Attr& a);
post_op_attr to_post_op(const std::optional<fs::Attr>& a);
pre_op_attr to_pre_op(const std::optional<fs::PreAttr>& a);
wcc_data to_wcc(const fs::Wcc& wcc);

// False when a client-supplied time is not a valid timestamp (nseconds >= 10^9).
bool from_sattr(const sattr3& in, fs::SetAttr* out);

// The wire form of `fh`; points into `fh`, which must outlive the encoding.
nfs_fh3 to_wire(FileHandle& fh);
post_op_fh3 to_post_op_fh(FileHandle& fh);

// A verifier is 8 opaque bytes; nasd stores it as a number in big-endian byte order.
void put_verifier(uint64_t v, char out[8]);
uint64_t get_verifier(const char in[8]);

}  // namespace nasd::nfs::nfs3
