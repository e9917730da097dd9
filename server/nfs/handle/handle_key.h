// The secret that authenticates file handles. It lives in a file so handles stay valid across
// restarts, and the same file is copied to every cluster node so any node accepts any handle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nasd::nfs {

inline constexpr size_t kHandleKeyBytes = 32;
inline constexpr size_t kMinHandleKeyBytes = 16;  // shorter keys are refused as too weak

// Reads the key stored at `path`; when the file does not exist, creates it (mode 0600) with
// fresh random bytes. Throws std::runtime_error with the path and reason on any failure, or
// when an existing file holds fewer than kMinHandleKeyBytes bytes.
std::vector<uint8_t> load_or_create_handle_key(const std::string& path);

}  // namespace nasd::nfs
