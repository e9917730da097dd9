// The reply window file: a volume's most recent journalled calls that carry a client identity
// (nvram::JournalVolume::reply_window()), saved beside the volume when it is handed over
// cleanly. The journal trims a volume's records once its file system holds them, which a clean
// close (planned failover, failback, node stop) does at once; without this file the next owner
// could not answer a retransmitted CREATE/REMOVE/... with its original reply.
//
// Format (little-endian): u32 magic "NVRW", u16 version 1, u32 count, then count x (u32 length,
// Call payload as in call_record.h), then u32 CRC32C of everything before it. Written to a
// temporary file, synced, renamed over the old one. A file that is damaged, truncated or of
// another version is ignored as a whole (logged): a reply cache that starts empty is what a
// node without this file has, never a wrong answer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nasd::nvram {

inline constexpr uint32_t kReplyWindowMagic = 0x5752564e;  // "NVRW"
inline constexpr uint16_t kReplyWindowVersion = 1;
inline constexpr size_t kReplyWindowMaxEntries = 65536;
inline constexpr size_t kReplyWindowMaxEntryBytes = 64 * 1024;

// Writes `payloads` to `path` atomically. False with *error on failure.
bool save_reply_window(const std::string& path, const std::vector<std::vector<uint8_t>>& payloads,
                       std::string* error);
// Reads the file at `path`. Missing file: true and no entries. Damaged: false with *error.
bool load_reply_window(const std::string& path, std::vector<std::vector<uint8_t>>* payloads,
                       std::string* error);
// Parses a reply window file's bytes (what load_reply_window reads; fuzzed).
bool parse_reply_window(const std::vector<uint8_t>& bytes,
                        std::vector<std::vector<uint8_t>>* payloads, std::string* error);

}  // namespace nasd::nvram
