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

// A stable name for an export inside file handles: 24 bits of a hash of its normalized path,
// never 0 (0 marks a handle issued before handles named their export). The same path gives the
// same id on every node and after every restart or reload, so a handle keeps naming the export
// it was issued under; two exports whose ids collide are refused when the table is built.
uint32_t export_id_for_path(const std::string& path);

struct ExportPolicy {
  std::string path;  // normalized: absolute, no empty, "." or ".." components, no trailing '/'
  std::vector<std::string> path_components;
  uint32_t export_id = 0;  // export_id_for_path(path); set by the table
  std::string volume_name;
  uint32_t volume_id = 0;
  std::vector<ClientSpec> clients;
  bool read_only = true;
  Squash squash = Squash::Root;
  // knfsd's `secure`: only calls from a reserved source port (below 1024) are served, so a
  // local user on a client machine cannot speak for root or any other user.
  bool secure = true;
  uint32_t anon_uid = 65534;
  uint32_t anon_gid = 65534;

  bool allows(const sockaddr_storage& peer) const;
  // False when the export is `secure` and `peer` sent from an unreserved port.
  bool port_allowed(const sockaddr_storage& peer) const;
  // The credential the volume checks for a call from `wire`. AUTH_NONE (and any flavor that
  // carries no Unix identity) is the anonymous user.
  fs::Cred credential_for(const rpc::Credential& wire) const;
};

}  // namespace nasd::nfs
