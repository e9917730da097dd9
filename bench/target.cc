#include "bench/target.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace nasd::bench {

namespace {

int parse_number(const std::string& text, const std::string& what, const std::string& origin,
                 long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < lo || v > hi) {
    throw TargetError("target '" + origin + "': " + what + " '" + text + "' is not a number in " +
                      std::to_string(lo) + ".." + std::to_string(hi));
  }
  return static_cast<int>(v);
}

void apply_query(Target& t, const std::string& query) {
  std::istringstream in(query);
  std::string item;
  while (std::getline(in, item, '&')) {
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos) throw TargetError("target '" + t.text + "': argument '" + item + "' has no value");
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "nfsport") {
      t.nfs_port = parse_number(value, key, t.text, 1, 65535);
    } else if (key == "mountport") {
      t.mount_port = parse_number(value, key, t.text, 1, 65535);
    } else if (key == "uid") {
      t.uid = parse_number(value, key, t.text, 0, 0x7fffffff);
    } else if (key == "gid") {
      t.gid = parse_number(value, key, t.text, 0, 0x7fffffff);
    } else if (key == "version") {
      if (value != "3") throw TargetError("target '" + t.text + "': only NFS version 3 is generated");
    } else {
      throw TargetError("target '" + t.text + "': unknown argument '" + key +
                        "' (known: nfsport, mountport, uid, gid, version)");
    }
  }
}

}  // namespace

Target parse_target(const std::string& text) {
  Target t;
  t.text = text;
  const std::string scheme = "nfs://";
  if (text.compare(0, scheme.size(), scheme) == 0) {
    std::string rest = text.substr(scheme.size());
    size_t q = rest.find('?');
    std::string query = q == std::string::npos ? "" : rest.substr(q + 1);
    rest = rest.substr(0, q);
    size_t slash = rest.find('/');
    if (slash == std::string::npos) throw TargetError("target '" + text + "' has no export path");
    std::string hostport = rest.substr(0, slash);
    t.export_path = rest.substr(slash);
    size_t colon = hostport.rfind(':');
    if (colon != std::string::npos && hostport.find(']') == std::string::npos) {
      t.nfs_port = parse_number(hostport.substr(colon + 1), "port", text, 1, 65535);
      hostport = hostport.substr(0, colon);
    }
    t.server = hostport;
    apply_query(t, query);
  } else {
    size_t colon = text.find(':');
    if (colon == std::string::npos) {
      throw TargetError("target '" + text + "' is neither nfs://server/export nor server:/export");
    }
    t.server = text.substr(0, colon);
    t.export_path = text.substr(colon + 1);
  }
  if (t.server.empty()) throw TargetError("target '" + text + "' has no server");
  if (t.export_path.empty() || t.export_path[0] != '/') {
    throw TargetError("target '" + text + "': the export path must start with '/'");
  }
  return t;
}

}  // namespace nasd::bench
