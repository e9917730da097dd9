#include "server/http/host_check.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

namespace nasd::http {

bool host_allowed(const std::string& host_header, const std::vector<std::string>& allowed) {
  if (host_header.empty() || host_header.size() > 260) return false;
  std::string host;
  if (host_header.front() == '[') {  // [IPv6]:port
    const size_t close = host_header.find(']');
    if (close == std::string::npos) return false;
    host = host_header.substr(1, close - 1);
    in6_addr a6{};
    return ::inet_pton(AF_INET6, host.c_str(), &a6) == 1;
  }
  host = host_header.substr(0, host_header.find(':'));
  std::transform(host.begin(), host.end(), host.begin(), [](unsigned char c) { return std::tolower(c); });
  if (!host.empty() && host.back() == '.') host.pop_back();  // "name." is "name"
  in_addr a{};
  if (::inet_pton(AF_INET, host.c_str(), &a) == 1) return true;
  if (host == "localhost") return true;
  return std::find(allowed.begin(), allowed.end(), host) != allowed.end();
}

}  // namespace nasd::http
