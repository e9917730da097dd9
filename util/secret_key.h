// A shared secret kept in a file: the file-handle key and the cluster key are both such a file,
// made once (mode 0600, random bytes from OpenSSL) and then copied to every node that must share
// it. Two processes that start at once on the same path agree on one key (it is linked into
// place atomically), and a crash never leaves a half-written key behind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nasd {

inline constexpr size_t kSecretKeyBytes = 32;
inline constexpr size_t kMinSecretKeyBytes = 16;  // shorter keys are refused as too weak

// Reads the key stored at `path`; when the file does not exist, creates it with
// kSecretKeyBytes fresh random bytes. `what` names the key in errors ("cluster key").
// Throws std::runtime_error with the path and reason on any failure, when an existing file
// holds fewer than kMinSecretKeyBytes bytes, or when it is open to other users (below).
std::vector<uint8_t> load_or_create_secret_key(const std::string& path, const std::string& what);

// Throws std::runtime_error ("<what> <path> is open to other users (mode 0644) ... chmod 600")
// unless the open file `fd` is a regular file with no group or other permission bits: a secret
// others can read is no secret, and starting with it would hide that.
void check_private_file(int fd, const std::string& path, const std::string& what);

}  // namespace nasd
