#include "server/http/http_options.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

namespace nasd::http {
namespace {

bool is_loopback(const std::string& address) {
  in_addr a{};
  return ::inet_pton(AF_INET, address.c_str(), &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

std::string in_dir(const std::string& file, const std::string& data_dir) {
  return !file.empty() && file.front() == '/' ? file : data_dir + "/" + file;
}

}  // namespace

HttpOptions HttpOptions::from_config(const ConfigSection& node, const std::string& data_dir) {
  HttpOptions o;
  int64_t port = node.get_int("http_port", o.port);
  if (port < 0 || port > 65535)
    throw ConfigError("[node] http_port must be 0 (off) or a TCP port, not " + std::to_string(port));
  o.port = static_cast<uint16_t>(port);
  // The NFS address faces the clients: the page stays on loopback unless http_listen names the
  // management network. A loopback NFS address (nodes sharing one test machine) is kept.
  const std::string nfs_listen = node.get("listen", "");
  o.listen = node.get("http_listen", is_loopback(nfs_listen) ? nfs_listen : "127.0.0.1");
  in_addr parsed{};
  if (::inet_pton(AF_INET, o.listen.c_str(), &parsed) != 1)
    throw ConfigError("[node] http_listen must be one IPv4 address, not '" + o.listen + "'");
  o.password_file = in_dir(node.get("http_password_file", "http.passwd"), data_dir);
  o.token_file = in_dir(node.get("http_token_file", "http.token"), data_dir);
  const std::string cert = node.get("http_tls_cert", "");
  if (!cert.empty()) o.tls_cert = in_dir(cert, data_dir);
  for (std::string host : node.get_list("http_hosts")) {
    std::transform(host.begin(), host.end(), host.begin(), [](unsigned char c) { return std::tolower(c); });
    if (host.empty() || host.size() > 253 || host.find_first_of(" :/@") != std::string::npos)
      throw ConfigError("[node] http_hosts: '" + host + "' is not a host name");
    o.hosts.push_back(host);
  }
  return o;
}

}  // namespace nasd::http
