// A target is one exported file system the load goes to, named the way libnfs names it:
//   nfs://server[:nfsport]/export[?nfsport=N&mountport=M&uid=U&gid=G&version=3]
// or the classic `server:/export`. The ports matter because the servers under test may not
// register with rpcbind; without them the portmapper on the server is asked.
#pragma once

#include <stdexcept>
#include <string>

namespace nasd::bench {

struct Target {
  std::string text;         // as given, for the report
  std::string server;
  std::string export_path;  // always starts with '/'
  int nfs_port = 0;         // 0: ask the portmapper
  int mount_port = 0;       // 0: ask the portmapper
  int uid = -1, gid = -1;   // AUTH_UNIX credential; -1 keeps the process's own
};

struct TargetError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

Target parse_target(const std::string& text);

}  // namespace nasd::bench
