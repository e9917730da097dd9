// Block I/O on the backing file or block device through io_uring. Thread-safe: data I/O and
// flushes use separate rings so a slow fdatasync does not stall reads.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <liburing.h>

#include "fs/lfs/write_gate.h"

namespace nasd::fs::lfs {

class BlockDevice {
 public:
  // Opens `path`; with `create_bytes` > 0 a regular file is created/extended to that size.
  static std::unique_ptr<BlockDevice> open(const std::string& path, uint64_t create_bytes,
                                           std::string* err);
  ~BlockDevice();
  BlockDevice(const BlockDevice&) = delete;
  BlockDevice& operator=(const BlockDevice&) = delete;

  uint64_t size_bytes() const { return size_; }
  const std::string& path() const { return path_; }

  // All offsets and lengths are in 4 KiB blocks. Return false on an I/O error.
  bool read(uint64_t block, uint32_t nblocks, void* buf);
  struct Read {
    uint64_t block = 0;
    void* buf = nullptr;  // one block
  };
  // Reads many single blocks with one batch of submissions, merging adjacent addresses.
  bool read(const std::vector<Read>& reads);
  struct Write {
    uint64_t block = 0;
    std::vector<iovec> iov;  // each a multiple of the block size
  };
  // Submits all writes at once and waits for every one of them.
  bool write(const std::vector<Write>& writes);
  bool write(uint64_t block, const void* buf, uint32_t nblocks);
  bool sync();  // fdatasync
  // Admits every batch of writes (see write_gate.h). Set before use.
  void set_write_gate(std::shared_ptr<WriteGate> gate) { gate_ = std::move(gate); }

 private:
  BlockDevice(int fd, uint64_t size, std::string path);
  bool run(io_uring* ring, std::vector<iovec>& iov, uint64_t off, bool is_write);
  bool write_admitted(const std::vector<Write>& writes);  // with io_mu_ held

  int fd_;
  uint64_t size_;
  std::string path_;
  std::shared_ptr<WriteGate> gate_;
  std::mutex io_mu_, sync_mu_;
  io_uring io_ring_, sync_ring_;
};

}  // namespace nasd::fs::lfs
