// Block I/O on the backing file or block device through io_uring. Thread-safe: data I/O and
// flushes use separate rings so a slow fdatasync does not stall reads.
//
// Host faults: a regular file is allocated up front (fallocate) unless the volume is thin, so a
// full host disk shows at creation. A thin file (or a filesystem that cannot reserve) may still
// return ENOSPC on a write: write_log() then keeps the failed batch in memory, reads see it as
// if it had reached the disk, and retry_held() writes it once space is back. Nothing after a
// held batch is written before it, so the log on disk stays a prefix of what was appended.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <cerrno>

#include <liburing.h>

#include "fs/lfs/write_gate.h"

namespace nasd::fs::lfs {

class BlockDevice {
 public:
  // Opens `path`; with `create_bytes` > 0 a regular file is created/extended to that size.
  // With `preallocate` the file's whole size is reserved on the host (fallocate); when a new
  // file or an extension does not fit, open fails and says how much was missing. An existing
  // file whose holes cannot be filled still opens (`*warning` says so; it stays thin).
  static std::unique_ptr<BlockDevice> open(const std::string& path, uint64_t create_bytes,
                                           std::string* err, bool preallocate = true,
                                           std::string* warning = nullptr);
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

  // Like write(), for log units: when the host returns ENOSPC or EDQUOT the batch is kept (see
  // the header comment) and false is returned. While a batch is held every write_log() first
  // retries it, and the new batch is held behind it when that fails.
  bool write_log(const std::vector<Write>& writes);
  // Writes the held batches; true when nothing is held any more.
  bool retry_held();
  bool holds_unwritten() const { return held_blocks_.load() > 0; }
  uint64_t held_bytes() const;
  // The errno of the last failed write or sync (ENOSPC, EIO, EACCES for a refused gate, ...).
  int last_error() const { return last_error_.load(); }
  static bool is_space_error(int err) { return err == ENOSPC || err == EDQUOT; }

  // For tests only: asked before every batch of writes (and syncs); a nonzero errno fails the
  // batch as if the host had returned it.
  using FaultHook = std::function<int()>;
  void set_write_fault_hook(FaultHook hook);
  // Admits every batch of writes (see write_gate.h). Set before use.
  void set_write_gate(std::shared_ptr<WriteGate> gate) { gate_ = std::move(gate); }

 private:
  BlockDevice(int fd, uint64_t size, std::string path);
  // 0, or the errno of the failure (EIO when the ring itself failed).
  int run(io_uring* ring, std::vector<iovec>& iov, uint64_t off, bool is_write);
  int write_locked(const std::vector<Write>& writes);    // gate + fault hook; io_mu_ held
  int write_admitted(const std::vector<Write>& writes);  // with io_mu_ held
  int retry_held_locked();
  void hold_locked(const std::vector<Write>& writes);
  void overlay_held_locked(uint64_t block, uint32_t nblocks, void* buf) const;

  int fd_;
  uint64_t size_;
  std::string path_;
  std::shared_ptr<WriteGate> gate_;
  std::mutex io_mu_, sync_mu_;
  io_uring io_ring_, sync_ring_;
  std::atomic<int> last_error_{0};
  FaultHook fault_hook_;                                          // guarded by io_mu_
  std::map<uint64_t, std::unique_ptr<uint8_t[]>> held_;           // block -> copy; io_mu_
  std::atomic<uint64_t> held_blocks_{0};
};

}  // namespace nasd::fs::lfs
