#include "tests/e2e/e2e_target.h"

#include <arpa/inet.h>

#include <cstdlib>
#include <stdexcept>

namespace nasd::e2e {
namespace {

// MOUNT's dirpath is at most MNTPATHLEN (1024) bytes (RFC 1813 appendix I).
constexpr size_t kMaxExportPath = 1024;
constexpr size_t kMaxSpec = 2048;

uint16_t parse_port(const std::string& text, const std::string& spec) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos)
    throw std::invalid_argument("NASD_E2E_TARGET '" + spec + "': bad port '" + text + "'");
  unsigned long v = std::stoul(text);
  if (v == 0 || v > 65535)
    throw std::invalid_argument("NASD_E2E_TARGET '" + spec + "': port out of range: " + text);
  return static_cast<uint16_t>(v);
}

}  // namespace

std::optional<E2eTarget> E2eTarget::from_environment() {
  const char* v = std::getenv("NASD_E2E_TARGET");
  if (!v || !*v) return std::nullopt;
  return parse(v);
}

E2eTarget E2eTarget::parse(const std::string& spec) {
  const std::string usage = " (want HOST[:NFS_PORT[:MOUNT_PORT]]:/EXPORT)";
  if (spec.size() > kMaxSpec) throw std::invalid_argument("NASD_E2E_TARGET is too long");
  size_t slash = spec.find(":/");
  if (slash == std::string::npos)
    throw std::invalid_argument("NASD_E2E_TARGET '" + spec + "': no ':/EXPORT'" + usage);
  E2eTarget t;
  t.export_path = spec.substr(slash + 1);
  if (t.export_path.size() > kMaxExportPath ||
      t.export_path.find_first_of(std::string("\n\0", 2)) != std::string::npos)
    throw std::invalid_argument("NASD_E2E_TARGET '" + spec + "': bad export path");
  while (t.export_path.size() > 1 && t.export_path.back() == '/') t.export_path.pop_back();

  std::string address = spec.substr(0, slash);
  size_t c1 = address.find(':');
  t.host = address.substr(0, c1);
  if (c1 != std::string::npos) {
    size_t c2 = address.find(':', c1 + 1);
    t.nfs_port = parse_port(address.substr(c1 + 1, c2 - (c1 + 1)), spec);
    if (c2 != std::string::npos) t.mount_port = parse_port(address.substr(c2 + 1), spec);
  }
  in_addr unused{};
  if (inet_pton(AF_INET, t.host.c_str(), &unused) != 1)
    throw std::invalid_argument("NASD_E2E_TARGET '" + spec + "': '" + t.host +
                                "' is not an IPv4 address" + usage);
  return t;
}

std::string E2eTarget::describe() const {
  return host + ":" + std::to_string(nfs_port) + ":" + std::to_string(mount_port) + ":" +
         export_path;
}

std::string E2eTarget::url(const std::string& path, const std::string& extra_query) const {
  std::string full = (export_path == "/" ? "" : export_path) + path;
  if (full.empty()) full = "/";
  std::string u = "nfs://" + host + full + "?nfsport=" + std::to_string(nfs_port) +
                  "&mountport=" + std::to_string(mount_port) + "&version=3";
  if (!extra_query.empty()) u += "&" + extra_query;
  return u;
}

}  // namespace nasd::e2e
