// MOUNT v3 (RFC 1813 appendix I) over an RpcChannel: MNT, DUMP, UMNT, UMNTALL, EXPORT, NULL.
#pragma once

#include <nfsc/libnfs.h>  // defines EXTERN, which the raw headers need
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>

#include <string>
#include <vector>

#include "tests/e2e/nfs3_client.h"
#include "tests/e2e/rpc_channel.h"

namespace nasd::e2e {

struct MountReply {
  mountstat3 status = MNT3ERR_SERVERFAULT;
  Fh root;
  std::vector<int> auth_flavors;
};

struct MountEntry {
  std::string hostname;
  std::string directory;
};

struct ExportEntry {
  std::string directory;
  std::vector<std::string> groups;
};

class Mount3Client {
 public:
  explicit Mount3Client(RpcChannel& channel) : ch_(channel) {}

  void null();
  MountReply mnt(const std::string& path);
  std::vector<MountEntry> dump();
  void umnt(const std::string& path);
  void umntall();
  std::vector<ExportEntry> exports();

 private:
  RpcChannel& ch_;
};

// The export's root handle via a short-lived MOUNT connection (throws unless MNT3_OK).
Fh mount_root(uint16_t mount_port, const std::string& path, const Credential& cred = {});
Fh mount_root(const std::string& host, uint16_t mount_port, const std::string& path,
              const Credential& cred = {});

}  // namespace nasd::e2e
