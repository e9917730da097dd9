#include "server/admin/admin_protocol.h"

#include <stdexcept>

namespace nasd::admin {

std::string encode_admin_request(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (w.find('\n') != std::string::npos)
      throw std::invalid_argument("admin arguments cannot contain newlines");
    if (w.empty()) continue;  // an empty argument would end the request early
    out += w;
    out += '\n';
  }
  out += '\n';
  return out;
}

std::optional<std::vector<std::string>> decode_admin_request(const std::string& bytes) {
  std::vector<std::string> words;
  size_t pos = 0;
  for (;;) {
    size_t nl = bytes.find('\n', pos);
    if (nl == std::string::npos) return std::nullopt;
    if (nl == pos) return words;  // the empty line
    words.push_back(bytes.substr(pos, nl - pos));
    pos = nl + 1;
  }
}

std::string encode_admin_response(bool ok, const std::string& text) {
  return (ok ? "ok\n" : "error\n") + text;
}

bool decode_admin_response(const std::string& bytes, bool* ok, std::string* text) {
  size_t nl = bytes.find('\n');
  std::string status = nl == std::string::npos ? bytes : bytes.substr(0, nl);
  if (status != "ok" && status != "error") {
    *text = "malformed reply from the control socket\n";
    return false;
  }
  *ok = status == "ok";
  *text = bytes.substr(nl + 1);
  return true;
}

}  // namespace nasd::admin
