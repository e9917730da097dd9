// The one binary form of a Volume call (see calls.h for what each carries), used by the
// interconnect frame (a forwarded call) and by the NVRAM journal record (a journalled call).
//
// Request: u8 codec version, u8 op, u32 volume id, credential (uid, gid, u32 count + gids), the
//          optional call identity (presence byte; then 16 address bytes, u16 family, u16 port,
//          u32 xid, prog, vers, proc, u64 args hash, u32 export id: fs/call_identity.h), then
//          the op's argument fields. Nothing else of OpContext is encoded: a request cannot set a
//          journal sequence or force an inode.
// Reply:   u8 codec version, u8 op, u32 status, u64 write verifier, u8 has-result, then (if set)
//          the op's result fields.
// All integers little-endian and fixed width (util/byte_io.h); strings and byte strings carry a
// u32 length; optionals a one-byte presence flag. Decoding checks every length and enum value
// against hard limits before trusting it and rejects trailing bytes, so any byte string is
// either a valid message or an error with a reason, never a crash or an allocation sized by the
// sender.
//
// Compatibility: the version byte is on the wire and in NVRAM. Version 2 dropped the
// journal fields from the encoded context and moved WRITE's data to the end of its arguments;
// version 3 (this one) added the call identity, so the reply cache moves with the data. A
// version 1 or 2 message is refused with a clear error (both ends of a pair run the same build, and
// the journal refuses an old record format at open, see nvram/record.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fs/call/calls.h"
#include "util/byte_io.h"

namespace nasd::fs::call {

inline constexpr uint8_t kVolumeCodecVersion = 3;
// Upper bounds a decoder enforces (a sender exceeding them is broken or hostile).
inline constexpr size_t kMaxNameBytes = 4096;       // names and symlink targets
inline constexpr size_t kMaxDataBytes = 8u << 20;   // READ/WRITE payloads
inline constexpr size_t kMaxSupplementaryGids = 16; // AUTH_SYS limit

std::vector<uint8_t> encode_request(const VolumeRequest& req);
// On failure returns false and says why in *error (if given). The decoded request borrows
// strings and WRITE data from `in`: keep `in` alive while using *out.
bool decode_request(std::span<const uint8_t> in, VolumeRequest* out, std::string* error = nullptr);

std::vector<uint8_t> encode_reply(const VolumeReply& reply);
// `expected` is the op of the request this answers; a reply for another op is malformed.
bool decode_reply(std::span<const uint8_t> in, VolumeOp expected, VolumeReply* out,
                  std::string* error = nullptr);

// ---- pieces, for formats that embed a call in a larger message (the NVRAM record) ----

// Appends the request. With `omit_write_data`, a WRITE's data length is written but not its
// bytes: the caller stores write_data(req) right after (the journal copies it once, from the
// client's buffer into NVRAM); the concatenation is exactly encode_request(req).
void write_request(util::ByteWriter& w, const VolumeRequest& req, bool omit_write_data = false);
std::span<const uint8_t> write_data(const VolumeRequest& req);  // empty unless WRITE
// Reads one request at the reader's position (no check for trailing bytes).
bool read_request(util::ByteReader& r, VolumeRequest* out);
void write_reply(util::ByteWriter& w, const VolumeReply& reply);
bool read_reply(util::ByteReader& r, VolumeOp expected, VolumeReply* out);

// One line for logs and dumps: `CREATE dir=1/0 name="a" mode=1 uid=0`.
std::string describe_request(const VolumeRequest& req);

// Fuzzing entry point (libFuzzer's LLVMFuzzerTestOneInput calls it): decodes `data` as a
// request and as a reply to every op; whatever decodes must re-encode to bytes that decode to
// the same encoding. Aborts on a violated invariant; returns 0 otherwise.
int fuzz_volume_codec(const uint8_t* data, size_t size);

}  // namespace nasd::fs::call
