// The management HTTP listener of a node (`[node]` keys; the section's other keys belong to the
// node and the RPC transport, which also reject unknown ones):
//   http_port           8049 by default; 0 turns the listener (metrics and page) off
//   http_listen         the address it binds: the node's management address. Defaults to
//                       `listen` (127.0.0.1 unless configured), or to 127.0.0.1 when `listen`
//                       is every interface (0.0.0.0): only an explicit http_listen offers the
//                       page and the metrics beyond one address.
//   http_password_file  the admin login's hashed password (nasd-passwd), inside data_dir by
//                       default `http.passwd`; without the file the page stays read-only.
#pragma once

#include <cstdint>
#include <string>

#include "util/config.h"

namespace nasd::http {

struct HttpOptions {
  uint16_t port = 8049;  // 0: off
  std::string listen = "127.0.0.1";
  std::string password_file;  // absolute

  bool enabled() const { return port != 0; }
  // `data_dir` resolves a relative password file. Throws ConfigError for a bad port.
  static HttpOptions from_config(const ConfigSection& node, const std::string& data_dir);
};

}  // namespace nasd::http
