// The control socket's wire format, shared by the server and the nasd-admin client.
// Request: each argument followed by '\n', then an empty line. Response: "ok\n" or "error\n",
// then free text until the server closes the connection. Text framing keeps the socket usable
// with socat/nc when debugging.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace nasd::admin {

inline constexpr size_t kMaxAdminRequest = 64 * 1024;

// Throws std::invalid_argument if an argument contains a newline.
std::string encode_admin_request(const std::vector<std::string>& words);
// nullopt while the request is incomplete.
std::optional<std::vector<std::string>> decode_admin_request(const std::string& bytes);

std::string encode_admin_response(bool ok, const std::string& text);
// False (and `text` explains) when the status line is missing or unknown.
bool decode_admin_response(const std::string& bytes, bool* ok, std::string* text);

}  // namespace nasd::admin
