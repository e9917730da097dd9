#include "server/nfs/exports/export_policy.h"

#include <algorithm>

namespace nasd::nfs {

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
