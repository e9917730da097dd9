#include "server/http/http_options.h"

namespace nasd::http {

HttpOptions HttpOptions::from_config(const ConfigSection& node, const std::string& data_dir) {
  HttpOptions o;
  int64_t port = node.get_int("http_port", o.port);
  if (port < 0 || port > 65535)
    throw ConfigError("[node] http_port must be 0 (off) or a TCP port, not " + std::to_string(port));
  o.port = static_cast<uint16_t>(port);
  // The NFS address may be every interface (0.0.0.0); the management page then stays on
  // loopback until an http_listen names the management network.
  std::string nfs_listen = node.get("listen", o.listen);
  if (nfs_listen == "0.0.0.0" || nfs_listen == "*") nfs_listen = "127.0.0.1";
  o.listen = node.get("http_listen", nfs_listen);
  if (o.listen.empty() || o.listen.find_first_of(" ,:") != std::string::npos)
    throw ConfigError("[node] http_listen must be one IPv4 address, not '" + o.listen + "'");
  std::string pw = node.get("http_password_file", "http.passwd");
  o.password_file = !pw.empty() && pw.front() == '/' ? pw : data_dir + "/" + pw;
  return o;
}

}  // namespace nasd::http
