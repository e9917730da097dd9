#include "server/nfs/exports/export_policy.h"

#include <netinet/in.h>

#include <algorithm>

namespace nasd::nfs {

uint32_t export_id_for_path(const std::string& path) {
  uint32_t h = 2166136261u;  // FNV-1a: stable across builds and machines, unlike std::hash
  for (unsigned char c : path) {
    h ^= c;
    h *= 16777619u;
  }
  h = (h ^ (h >> 24)) & 0xffffffu;
  return h == 0 ? 1 : h;
}

bool ExportPolicy::port_allowed(const sockaddr_storage& peer) const {
  if (!secure) return true;
  uint16_t port = 0;
  if (peer.ss_family == AF_INET) port = ntohs(reinterpret_cast<const sockaddr_in&>(peer).sin_port);
  else if (peer.ss_family == AF_INET6) port = ntohs(reinterpret_cast<const sockaddr_in6&>(peer).sin6_port);
  else return false;
  return port < 1024;
}

bool ExportPolicy::allows(const sockaddr_storage& peer) const {
  return std::any_of(clients.begin(), clients.end(),
                     [&](const ClientSpec& c) { return c.matches(peer); });
}

fs::Cred ExportPolicy::credential_for(const rpc::Credential& wire) const {
  fs::Cred anon;
  anon.uid = anon_uid;
  anon.gid = anon_gid;
  if (wire.flavor != rpc::kAuthSys || squash == Squash::All) return anon;

  fs::Cred cred;
  cred.uid = wire.uid;
  cred.gid = wire.gid;
  cred.gids = wire.gids;
  if (cred.gids.size() > 16) cred.gids.resize(16);  // AUTH_SYS carries at most 16
  if (squash == Squash::Root) {
    if (cred.uid == 0) cred.uid = anon_uid;
    if (cred.gid == 0) cred.gid = anon_gid;
    // A squashed root must not keep root's group through the supplementary list either.
    std::replace(cred.gids.begin(), cred.gids.end(), 0u, anon_gid);
  }
  return cred;
}

}  // namespace nasd::nfs
