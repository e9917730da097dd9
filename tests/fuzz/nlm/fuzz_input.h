// The input format shared by the NLM/NSM fuzzer and its seed generator.
//
// An input is up to kMaxCalls records, each
//   [selector u8] [flags u8] [length u16 big-endian] [length bytes of XDR arguments]
// selector % 31 picks the procedure: 0..23 NLM v4, 24..30 NSM 0..6.
// flags: bits 0-1 the peer (127.0.0.1, 127.0.0.2, 10.1.2.3 (no export lists it), ::1);
// bit 2 version 1 instead of 4 (NLM) / 2 instead of 1 (NSM).
//
// File handles carry an HMAC the fuzzer cannot guess, so arguments may hold placeholders:
// a handle-sized opaque (length word 32) whose first byte is kHandleMarker is replaced by a
// real handle for volume 7 + (byte 1 % 2) and inode (byte 2), generation 1.
#pragma once

#include <cstdint>

namespace nasd::nlm::fuzz {

inline constexpr int kMaxCalls = 8;
inline constexpr uint32_t kNlmProcs = 24;
inline constexpr uint32_t kNsmProcs = 7;
inline constexpr uint8_t kHandleMarker = 0xfe;
inline constexpr uint8_t kHandleKeyByte = 0x42;  // the fuzz-only handle key: 32 such bytes

}  // namespace nasd::nlm::fuzz
