// The management page's admin password, stored only as a salted PBKDF2-HMAC-SHA256 hash (OpenSSL)
// in one line of a file the node reads at each login (so `nasd-passwd` changes it without a
// restart):
//   admin pbkdf2-sha256 ITERATIONS SALT_HEX HASH_HEX
// Checks compare in constant time (CRYPTO_memcmp) so the time of a refusal tells nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace nasd::http {

struct PasswordHash {
  std::string user = "admin";
  uint32_t iterations = 0;
  std::string salt;  // raw bytes
  std::string hash;  // raw bytes (32)

  // A fresh random salt. Throws std::runtime_error when OpenSSL fails.
  static PasswordHash make(const std::string& user, const std::string& password,
                           uint32_t iterations = 100000);
  // nullopt for a line that is not of the format above (bounded: at most 1 KiB is read).
  static std::optional<PasswordHash> parse(const std::string& line);
  std::string line() const;
  // Constant-time in the password's hash; false for another user.
  bool verify(const std::string& user, const std::string& password) const;
};

// A password of `length` random letters and digits (RAND_bytes).
std::string random_password(size_t length = 20);
// Random bytes as lower-case hex: session ids and CSRF tokens.
std::string random_token_hex(size_t bytes = 32);
// Constant-time equality of two strings (length may leak, contents do not).
bool constant_time_equal(const std::string& a, const std::string& b);

// Reads the first line of `path`; nullopt when it is missing, unreadable or malformed.
std::optional<PasswordHash> load_password_file(const std::string& path);
// Writes `hash` to `path` (mode 0600, replaced atomically). Throws std::runtime_error.
void store_password_file(const std::string& path, const PasswordHash& hash);

}  // namespace nasd::http
