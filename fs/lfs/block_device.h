// Block I/O on the backing file or block device through io_uring. Thread-safe: data I/O and
// flushes use separate rings so a slow fdatasync does not stall reads.
//
// Writes whose buffers are all block aligned (the log: cache blocks, summaries, inode blocks)
// go through a second descriptor opened with O_DIRECT, straight from the caller's buffers to the
// device: a buffered write copied every logged block into the host's page cache first (13% of a
// sequential WRITE's CPU in io-wq) and kept a second copy of data the block cache already holds.
// Anything unaligned, and every write where the host refuses O_DIRECT (tmpfs), takes the
// buffered descriptor. Reads and fdatasync use the buffered one; the kernel keeps the two
// coherent (a direct write flushes and invalidates the page cache over its range), and
// fdatasync on either descriptor covers the file's data and the metadata to find it.
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

// One block-sized buffer aligned to the block size, as an O_DIRECT write needs (a plain
// new[] is not: such a block would take the buffered path).
struct FreeAligned {
  void operator()(uint8_t* p) const;
};
using AlignedBlock = std::unique_ptr<uint8_t, FreeAligned>;
// Uninitialised; throws std::bad_alloc.
AlignedBlock make_aligned_block();

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
  // The data ring, held for a log write whose group is built before it is written: a caller
  // that lets others change its state between the two (Store::begin_flush / write_flush)
  // reserves the ring first, so every read issued meanwhile waits until the group is on the
  // device (or held) and nobody reads a block address the group has not written yet.
  std::unique_lock<std::mutex> reserve_for_log() { return std::unique_lock<std::mutex>(io_mu_); }
  // write_log() through a reservation (which it keeps; the caller drops it).
  bool write_log(const std::vector<Write>& writes, std::unique_lock<std::mutex>& reserved);
  // Writes the held batches; true when nothing is held any more.
  bool retry_held();
  bool holds_unwritten() const { return held_blocks_.load() > 0; }
  uint64_t held_bytes() const;
  // True when aligned writes bypass the host's page cache (O_DIRECT was accepted).
  bool direct_writes() const { return direct_fd_ >= 0; }
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

  // The descriptor for a write of these buffers: direct_fd_ when all are block aligned.
  int write_fd(const std::vector<iovec>& iov) const;

  int fd_;
  int direct_fd_ = -1;  // O_DIRECT, for aligned writes; -1 when the host refuses it
  uint64_t size_;
  std::string path_;
  std::shared_ptr<WriteGate> gate_;
  std::mutex io_mu_, sync_mu_;
  io_uring io_ring_, sync_ring_;
  std::atomic<int> last_error_{0};
  FaultHook fault_hook_;                                          // guarded by io_mu_
  std::map<uint64_t, AlignedBlock> held_;                         // block -> copy; io_mu_
  std::atomic<uint64_t> held_blocks_{0};
};

}  // namespace nasd::fs::lfs
