// libnfs's high-level synchronous client (nfs_* calls), mounted through the URL form
// nfs://127.0.0.1/r/v0?nfsport=P&mountport=Q&version=3 so no portmapper is involved.
// Used where a test wants ordinary file-system calls rather than one explicit procedure.
#pragma once

#include <nfsc/libnfs.h>

#include <cstdint>
#include <string>
#include <vector>

namespace nasd::e2e {

class NfsClient {
 public:
  // Mounts `url`; `uid`/`gid` go into every AUTH_SYS credential. Throws with libnfs's error.
  NfsClient(const std::string& url, uint32_t uid = 0, uint32_t gid = 0);
  ~NfsClient();
  NfsClient(const NfsClient&) = delete;
  NfsClient& operator=(const NfsClient&) = delete;

  nfs_context* ctx() { return nfs_; }
  std::string error() { return nfs_get_error(nfs_); }

  // Each returns 0 or a negative errno, like libnfs itself.
  int write_file(const std::string& path, const std::string& data, int mode = 0644);
  int read_file(const std::string& path, std::string* data);
  int mkdir(const std::string& path) { return nfs_mkdir(nfs_, path.c_str()); }
  int stat(const std::string& path, nfs_stat_64* st) { return nfs_stat64(nfs_, path.c_str(), st); }
  int unlink(const std::string& path) { return nfs_unlink(nfs_, path.c_str()); }
  int rename(const std::string& from, const std::string& to) {
    return nfs_rename(nfs_, from.c_str(), to.c_str());
  }
  int list(const std::string& path, std::vector<std::string>* names);

 private:
  nfs_context* nfs_ = nullptr;
};

}  // namespace nasd::e2e
