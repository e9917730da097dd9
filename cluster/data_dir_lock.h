// Holds an exclusive lock on a node's data folder for the life of the process, so that two
// nasd processes can never serve the same volumes and journal at once. The kernel drops the
// lock when the process dies (even by kill -9), so a restart after a crash is never blocked.
#pragma once

#include <string>

namespace nasd::cluster {

class DataDirLock {
 public:
  // Creates the folder if needed; throws std::runtime_error when another process holds it.
  explicit DataDirLock(const std::string& data_dir);
  ~DataDirLock();
  DataDirLock(const DataDirLock&) = delete;
  DataDirLock& operator=(const DataDirLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace nasd::cluster
