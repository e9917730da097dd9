// The Host allowlist of the management listener, against DNS rebinding: a hostile web page
// whose name an attacker re-points at the node's address makes the browser send that name as
// Host. An IP literal (the browser's origin is then the address itself), `localhost` and the
// configured names (`[node] http_hosts`) pass; any other name, or no Host at all, is refused.
#pragma once

#include <string>
#include <vector>

namespace nasd::http {

// `host_header`: the Host header's value ("name", "name:port", "1.2.3.4:8049", "[::1]:8049").
// `allowed`: lower-case names.
bool host_allowed(const std::string& host_header, const std::vector<std::string>& allowed);

}  // namespace nasd::http
