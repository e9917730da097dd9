// Binary form of forwarded Volume calls (see volume_calls.h for what each carries).
//
// Request: u8 codec version, u8 op, u32 volume id, OpContext, then the op's argument fields.
// Reply:   u8 codec version, u8 op, u32 status, u64 write verifier, u8 has-result, then (if set)
//          the op's result fields.
// All integers little-endian and fixed width; strings and byte strings carry a u32 length;
// optionals a one-byte presence flag. Decoding checks every length and enum value against hard
// limits before trusting it and rejects trailing bytes, so any byte string is either a valid
// message or an error with a reason, never a crash or an allocation sized by the sender.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cluster/interconnect/volume_calls.h"

namespace nasd::interconnect {

inline constexpr uint8_t kVolumeCodecVersion = 1;
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

// Fuzzing entry point (libFuzzer's LLVMFuzzerTestOneInput calls it): decodes `data` as a
// request and as a reply to every op; whatever decodes must re-encode to bytes that decode to
// the same encoding. Aborts on a violated invariant; returns 0 otherwise.
int fuzz_volume_codec(const uint8_t* data, size_t size);

}  // namespace nasd::interconnect
