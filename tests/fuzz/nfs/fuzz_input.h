// The input format shared by the NFS/MOUNT fuzzer and its seed generator.
//
// An input is up to kMaxCalls records, each
//   [selector u8] [flags u8] [length u16 big-endian] [length bytes of XDR arguments]
// selector % 28 picks the procedure: 0..21 NFSv3, 22..27 MOUNT 0..5.
// flags: bit 0 UDP instead of TCP; bits 1-2 the peer (rw client, ro client, unlisted, IPv6 ::1);
// bit 3 AUTH_NONE instead of AUTH_SYS; bit 4 uid 0 instead of 1000; bits 5-6 MOUNT version-1.
//
// File handles carry an HMAC the fuzzer cannot guess, so arguments may hold placeholders:
// a handle-sized opaque (length word 32) whose first byte is kHandleMarker is replaced by a
// real handle for volume 7 + (byte 1 % 3) and inode (byte 2), generation 1.
#pragma once

#include <cstdint>

namespace nasd::nfs::fuzz {

inline constexpr int kMaxCalls = 8;
inline constexpr uint32_t kNfsProcs = 22;
inline constexpr uint32_t kMountProcs = 6;
inline constexpr uint8_t kHandleMarker = 0xfe;
inline constexpr uint8_t kHandleKeyByte = 0x42;  // the fuzz-only handle key: 32 such bytes

}  // namespace nasd::nfs::fuzz
