// The read-only bearer token of the management listener: one line of 32-256 printable
// characters in a file only the service's user may read (mode 0600, checked at each read so a
// chmod gone wrong is noticed at once). Scrapers send it as `Authorization: Bearer <token>`; it
// reads /metrics and /api/status and nothing else. `nasd-passwd --token FILE` makes one.
#pragma once

#include <optional>
#include <string>

namespace nasd::http {

struct TokenFile {
  std::optional<std::string> token;  // nullopt: no usable token (missing file or `error`)
  std::string error;                 // why an existing file was refused ("" when none exists)
};
TokenFile load_token_file(const std::string& path);
// Writes a fresh random token (64 hex digits) to `path` (mode 0600) and returns it. Throws
// std::runtime_error.
std::string store_new_token_file(const std::string& path);

// The token of an Authorization header value "Bearer <token>" (scheme case-insensitive);
// nullopt for any other scheme or an empty token.
std::optional<std::string> bearer_token(const std::string& authorization);

}  // namespace nasd::http
