// The management HTTP listener of a node (`[node]` keys; the section's other keys belong to the
// node and the RPC transport, which also reject unknown ones):
//   http_port           8049 by default; 0 turns the listener (metrics and page) off
//   http_listen         the address it binds: the node's management address. Defaults to
//                       loopback: `listen` when that is a loopback address (127.0.0.0/8: the
//                       nodes of one test machine), else 127.0.0.1. The NFS client network
//                       never gets the page unless an http_listen names it.
//   http_password_file  the admin login's hashed password (nasd-passwd), inside data_dir by
//                       default `http.passwd`; without the file nobody can log in.
//   http_token_file     a read-only bearer token for scrapers (`Authorization: Bearer <token>`,
//                       Prometheus' `authorization: {credentials_file: ...}`): it reads
//                       /metrics and /api/status, never an action. Inside data_dir by default
//                       `http.token`; no file, no token. `nasd-passwd --token FILE` makes one.
//                       The file must be mode 0600 (or stricter), or it is refused.
//   http_tls_cert       a PEM file holding the certificate chain and its private key: the
//                       listener then speaks HTTPS only (TLS 1.2 or later). Mode 0600 required.
//   http_hosts          host names the Host header may carry besides IP literals and
//                       `localhost` (comma-separated): the names the page is reached by. Any
//                       other name is refused, so a DNS-rebinding page cannot read the API.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/config.h"

namespace nasd::http {

struct HttpOptions {
  uint16_t port = 8049;  // 0: off
  std::string listen = "127.0.0.1";
  std::string password_file;  // absolute
  std::string token_file;     // absolute
  std::string tls_cert;       // absolute; empty: plain HTTP
  std::vector<std::string> hosts;  // lower-case

  bool enabled() const { return port != 0; }
  // `data_dir` resolves relative files. Throws ConfigError for a bad port or address.
  static HttpOptions from_config(const ConfigSection& node, const std::string& data_dir);
};

}  // namespace nasd::http
