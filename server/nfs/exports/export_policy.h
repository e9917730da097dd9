// What one [export PATH] section grants: which clients may use the volume, whether they may
// change it, and how their wire identity maps to the credential the volume checks.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fs/volume.h"
#include "server/nfs/exports/client_spec.h"
#include "server/rpc/service.h"

namespace nasd::nfs {

enum class Squash {
  None,  // every AUTH_SYS identity is taken as sent
  Root,  // uid 0 becomes the anonymous user (gid 0 the anonymous group)
  All,   // every caller becomes the anonymous user
};

struct ExportPolicy {
  std::string path;  // normalized: absolute, no empty, "." or ".." components, no trailing '/'
  std::vector<std::string> path_components;
  std::string volume_name;
  uint32_t volume_id = 0;
  std::vector<ClientSpec> clients;
  bool read_only = true;
  Squash squash = Squash::Root;
  uint32_t anon_uid = 65534;
  uint32_t anon_gid = 65534;

  bool allows(const sockaddr_storage& peer) const;
  // The credential the volume checks for a call from `wire`. AUTH_NONE (and any flavor that
  // carries no Unix identity) is the anonymous user.
  fs::Cred credential_for(const rpc::Credential& wire) const;
};

}  // namespace nasd::nfs
