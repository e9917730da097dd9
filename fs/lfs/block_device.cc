#include "fs/lfs/block_device.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "fs/lfs/layout.h"

namespace nasd::fs::lfs {

namespace {
constexpr unsigned kQueueDepth = 64;
}

void FreeAligned::operator()(uint8_t* p) const { std::free(p); }

AlignedBlock make_aligned_block() {
  void* p = std::aligned_alloc(kBlockSize, kBlockSize);
  if (!p) throw std::bad_alloc();
  return AlignedBlock(static_cast<uint8_t*>(p));
}

namespace {

// Reserves [offset, offset + len) of a regular file on the host. 0 or an errno.
int reserve_range(int fd, uint64_t offset, uint64_t len) {
  if (len == 0) return 0;
  // posix_fallocate writes zeros itself where the filesystem has no fallocate.
  return posix_fallocate(fd, off_t(offset), off_t(len));
}

std::string mib(uint64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

}  // namespace

std::unique_ptr<BlockDevice> BlockDevice::open(const std::string& path, uint64_t create_bytes,
                                               std::string* err, bool preallocate,
                                               std::string* warning) {
  int flags = O_RDWR | O_CLOEXEC | (create_bytes ? O_CREAT : 0);
  int fd = ::open(path.c_str(), flags, 0600);
  if (fd < 0) {
    *err = path + ": " + strerror(errno);
    return nullptr;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *err = path + ": " + strerror(errno);
    ::close(fd);
    return nullptr;
  }
  uint64_t size = 0;
  if (S_ISBLK(st.st_mode)) {
    if (ioctl(fd, BLKGETSIZE64, &size) != 0) {
      *err = path + ": cannot read device size: " + strerror(errno);
      ::close(fd);
      return nullptr;
    }
  } else if (S_ISREG(st.st_mode)) {
    size = uint64_t(st.st_size);
    if (create_bytes > size) {
      // The new part is reserved before the size changes, so a file that does not fit is left
      // as it was (a new one stays empty and is formatted at the next start).
      if (preallocate) {
        if (int e = reserve_range(fd, size, create_bytes - size); e != 0) {
          if (ftruncate(fd, off_t(size)) != 0) { /* best effort: drop the partial reservation */ }
          *err = path + ": cannot allocate " + mib(create_bytes) + " on the host: " + strerror(e) +
                 (e == ENOSPC ? " (free space on its filesystem, or set a smaller size)" : "");
          ::close(fd);
          return nullptr;
        }
      } else if (ftruncate(fd, off_t(create_bytes)) != 0) {
        *err = path + ": cannot size file: " + strerror(errno);
        ::close(fd);
        return nullptr;
      }
      size = create_bytes;
    } else if (preallocate && size > 0) {
      // An existing file may be sparse (made thin, or by an older version): fill its holes now
      // rather than meeting ENOSPC in the middle of a flush.
      if (int e = reserve_range(fd, 0, size); e != 0 && warning)
        *warning = path + ": cannot allocate its " + mib(size) + " on the host (" + strerror(e) +
                   "); it stays thin, and writes get NOSPC while the host is full";
    }
  } else {
    *err = path + ": not a regular file or block device";
    ::close(fd);
    return nullptr;
  }
  auto dev = std::unique_ptr<BlockDevice>(new BlockDevice(fd, size, path));
  // Optional: tmpfs and some FUSE filesystems refuse O_DIRECT (EINVAL); writes then stay buffered.
  dev->direct_fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_DIRECT);
  if (io_uring_queue_init(kQueueDepth, &dev->io_ring_, 0) != 0 ||
      io_uring_queue_init(4, &dev->sync_ring_, 0) != 0) {
    *err = "io_uring_queue_init failed";
    return nullptr;  // destructor closes the fd; rings were zeroed in the constructor
  }
  return dev;
}

BlockDevice::BlockDevice(int fd, uint64_t size, std::string path)
    : fd_(fd), size_(size), path_(std::move(path)) {
  std::memset(&io_ring_, 0, sizeof io_ring_);
  std::memset(&sync_ring_, 0, sizeof sync_ring_);
  io_ring_.ring_fd = -1;
  sync_ring_.ring_fd = -1;
}

BlockDevice::~BlockDevice() {
  if (io_ring_.ring_fd >= 0) io_uring_queue_exit(&io_ring_);
  if (sync_ring_.ring_fd >= 0) io_uring_queue_exit(&sync_ring_);
  if (direct_fd_ >= 0) ::close(direct_fd_);
  ::close(fd_);
}

int BlockDevice::write_fd(const std::vector<iovec>& iov) const {
  if (direct_fd_ < 0) return fd_;
  for (const iovec& v : iov)
    if (reinterpret_cast<uintptr_t>(v.iov_base) % kBlockSize != 0 || v.iov_len % kBlockSize != 0)
      return fd_;
  return direct_fd_;
}

// One vectored transfer, resubmitting the remainder after a short read/write.
int BlockDevice::run(io_uring* ring, std::vector<iovec>& iov, uint64_t off, bool is_write) {
  size_t first = 0;
  while (first < iov.size()) {
    io_uring_sqe* sqe = io_uring_get_sqe(ring);
    if (!sqe) return EIO;
    unsigned n = unsigned(std::min<size_t>(iov.size() - first, IOV_MAX));
    if (is_write) io_uring_prep_writev(sqe, write_fd(iov), &iov[first], n, off);
    else io_uring_prep_readv(sqe, fd_, &iov[first], n, off);
    if (io_uring_submit_and_wait(ring, 1) < 0) return EIO;
    io_uring_cqe* cqe;
    if (io_uring_wait_cqe(ring, &cqe) != 0) return EIO;
    int res = cqe->res;
    io_uring_cqe_seen(ring, cqe);
    if (res == -EINTR || res == -EAGAIN) continue;
    if (res < 0) return -res;
    if (res == 0) return is_write ? ENOSPC : EIO;  // no progress, or a read past the end
    size_t done = size_t(res);
    off += done;
    while (done > 0 && first < iov.size()) {
      if (done >= iov[first].iov_len) {
        done -= iov[first].iov_len;
        first++;
      } else {
        iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + done;
        iov[first].iov_len -= done;
        done = 0;
      }
    }
  }
  return 0;
}

void BlockDevice::overlay_held_locked(uint64_t block, uint32_t nblocks, void* buf) const {
  if (held_.empty()) return;
  for (auto it = held_.lower_bound(block); it != held_.end() && it->first < block + nblocks; ++it)
    std::memcpy(static_cast<uint8_t*>(buf) + (it->first - block) * kBlockSize, it->second.get(),
                kBlockSize);
}

bool BlockDevice::read(uint64_t block, uint32_t nblocks, void* buf) {
  if ((block + nblocks) * kBlockSize > size_) return false;
  std::vector<iovec> iov{{buf, size_t(nblocks) * kBlockSize}};
  std::lock_guard<std::mutex> g(io_mu_);
  if (run(&io_ring_, iov, block * kBlockSize, false) != 0) return false;
  overlay_held_locked(block, nblocks, buf);
  return true;
}

bool BlockDevice::read(const std::vector<Read>& reads) {
  std::vector<Read> sorted = reads;
  std::sort(sorted.begin(), sorted.end(),
            [](const Read& a, const Read& b) { return a.block < b.block; });
  // Runs of adjacent blocks become one vectored read each.
  std::vector<std::pair<uint64_t, std::vector<iovec>>> runs;
  for (const Read& r : sorted) {
    if ((r.block + 1) * kBlockSize > size_) return false;
    if (runs.empty() || runs.back().first + runs.back().second.size() != r.block ||
        runs.back().second.size() >= IOV_MAX)
      runs.push_back({r.block, {}});
    runs.back().second.push_back({r.buf, kBlockSize});
  }
  std::lock_guard<std::mutex> g(io_mu_);
  for (size_t i = 0; i < runs.size(); i += kQueueDepth) {
    size_t batch = std::min<size_t>(runs.size() - i, kQueueDepth);
    for (size_t k = 0; k < batch; k++) {
      io_uring_sqe* sqe = io_uring_get_sqe(&io_ring_);
      if (!sqe) return false;
      auto& run = runs[i + k];
      io_uring_prep_readv(sqe, fd_, run.second.data(), unsigned(run.second.size()),
                          run.first * kBlockSize);
      io_uring_sqe_set_data64(sqe, i + k);
    }
    if (io_uring_submit_and_wait(&io_ring_, unsigned(batch)) < 0) return false;
    std::vector<size_t> redo;
    bool failed = false;
    for (size_t k = 0; k < batch; k++) {
      io_uring_cqe* cqe;
      if (io_uring_wait_cqe(&io_ring_, &cqe) != 0) return false;
      size_t idx = size_t(io_uring_cqe_get_data64(cqe));
      int res = cqe->res;
      io_uring_cqe_seen(&io_ring_, cqe);
      // Every completion is reaped before returning, so the ring stays usable after a failure.
      if (res < 0 && res != -EINTR && res != -EAGAIN) failed = true;
      else if (res < 0 || size_t(res) != runs[idx].second.size() * kBlockSize) redo.push_back(idx);
    }
    if (failed) return false;
    for (size_t idx : redo) {  // short or interrupted: read the run again, synchronously
      std::vector<iovec> iov = runs[idx].second;
      if (run(&io_ring_, iov, runs[idx].first * kBlockSize, false) != 0) return false;
    }
  }
  for (const Read& r : reads) overlay_held_locked(r.block, 1, r.buf);
  return true;
}

int BlockDevice::write_locked(const std::vector<Write>& writes) {
  if (fault_hook_)
    if (int e = fault_hook_(); e != 0) return e;
  if (!gate_) return write_admitted(writes);
  if (!gate_->enter()) return EACCES;  // fenced: another node owns the storage now
  const int err = write_admitted(writes);
  gate_->leave();
  return err;
}

bool BlockDevice::write(const std::vector<Write>& writes) {
  std::lock_guard<std::mutex> g(io_mu_);
  const int err = write_locked(writes);
  if (err != 0) last_error_ = err;
  return err == 0;
}

void BlockDevice::hold_locked(const std::vector<Write>& writes) {
  for (const Write& w : writes) {
    uint64_t block = w.block;
    for (const iovec& v : w.iov) {
      for (size_t off = 0; off < v.iov_len; off += kBlockSize, ++block) {
        AlignedBlock copy = make_aligned_block();
        std::memcpy(copy.get(), static_cast<const uint8_t*>(v.iov_base) + off, kBlockSize);
        held_[block] = std::move(copy);
      }
    }
  }
  held_blocks_ = held_.size();
}

int BlockDevice::retry_held_locked() {
  if (held_.empty()) return 0;
  std::vector<Write> writes;
  for (auto& [block, data] : held_) {
    if (writes.empty() || writes.back().block + writes.back().iov.size() != block ||
        writes.back().iov.size() >= IOV_MAX)
      writes.push_back(Write{block, {}});
    writes.back().iov.push_back({data.get(), kBlockSize});
  }
  if (int err = write_locked(writes); err != 0) return err;
  held_.clear();
  held_blocks_ = 0;
  return 0;
}

bool BlockDevice::write_log(const std::vector<Write>& writes) {
  std::unique_lock<std::mutex> reserved = reserve_for_log();
  return write_log(writes, reserved);
}

bool BlockDevice::write_log(const std::vector<Write>& writes,
                            std::unique_lock<std::mutex>& reserved) {
  assert(reserved.owns_lock() && reserved.mutex() == &io_mu_);
  (void)reserved;
  int err = retry_held_locked();
  if (err == 0) err = write_locked(writes);
  if (err == 0) return true;
  last_error_ = err;
  // Kept whatever the error: a volume that fails for good still reads what it had appended.
  hold_locked(writes);
  return false;
}

bool BlockDevice::retry_held() {
  std::lock_guard<std::mutex> g(io_mu_);
  int err = retry_held_locked();
  if (err != 0) last_error_ = err;
  return err == 0;
}

uint64_t BlockDevice::held_bytes() const { return held_blocks_.load() * kBlockSize; }

void BlockDevice::set_write_fault_hook(FaultHook hook) {
  std::lock_guard<std::mutex> g(io_mu_);
  fault_hook_ = std::move(hook);
}

int BlockDevice::write_admitted(const std::vector<Write>& writes) {
  // Submit in batches that fit the ring; each transfer is checked individually.
  size_t i = 0;
  while (i < writes.size()) {
    size_t batch = std::min<size_t>(writes.size() - i, kQueueDepth);
    std::vector<std::vector<iovec>> iovs(batch);
    for (size_t k = 0; k < batch; k++) {
      const Write& w = writes[i + k];
      size_t bytes = 0;
      for (auto& v : w.iov) bytes += v.iov_len;
      if (w.block * kBlockSize + bytes > size_ || w.iov.size() > IOV_MAX) return EINVAL;
      iovs[k] = w.iov;
      io_uring_sqe* sqe = io_uring_get_sqe(&io_ring_);
      if (!sqe) return EIO;
      io_uring_prep_writev(sqe, write_fd(iovs[k]), iovs[k].data(), unsigned(iovs[k].size()),
                           w.block * kBlockSize);
      io_uring_sqe_set_data64(sqe, k);
    }
    if (io_uring_submit_and_wait(&io_ring_, unsigned(batch)) < 0) return EIO;
    std::vector<bool> redo(batch, false);
    bool any_redo = false;
    int failed = 0;
    for (size_t k = 0; k < batch; k++) {
      io_uring_cqe* cqe;
      if (io_uring_wait_cqe(&io_ring_, &cqe) != 0) return EIO;
      size_t idx = size_t(io_uring_cqe_get_data64(cqe));
      int res = cqe->res;
      io_uring_cqe_seen(&io_ring_, cqe);
      size_t want = 0;
      for (auto& v : writes[i + idx].iov) want += v.iov_len;
      // Every completion is reaped before returning, so the ring stays usable after a failure.
      if (res < 0 && res != -EINTR && res != -EAGAIN) {
        if (failed == 0) failed = -res;
        continue;
      }
      if (res < 0 || size_t(res) != want) { redo[idx] = true; any_redo = true; }
    }
    if (failed != 0) return failed;
    // Rare short or interrupted writes are simply redone whole, synchronously.
    if (any_redo) {
      for (size_t k = 0; k < batch; k++) {
        if (!redo[k]) continue;
        std::vector<iovec> iov = writes[i + k].iov;
        if (int err = run(&io_ring_, iov, writes[i + k].block * kBlockSize, true); err != 0)
          return err;
      }
    }
    i += batch;
  }
  return 0;
}

bool BlockDevice::write(uint64_t block, const void* buf, uint32_t nblocks) {
  Write w;
  w.block = block;
  w.iov.push_back({const_cast<void*>(buf), size_t(nblocks) * kBlockSize});
  return write(std::vector<Write>{w});
}

bool BlockDevice::sync() {
  std::lock_guard<std::mutex> g(sync_mu_);
  for (int attempt = 0; attempt < 3; attempt++) {
    io_uring_sqe* sqe = io_uring_get_sqe(&sync_ring_);
    if (!sqe) return false;
    io_uring_prep_fsync(sqe, fd_, IORING_FSYNC_DATASYNC);
    if (io_uring_submit_and_wait(&sync_ring_, 1) < 0) return false;
    io_uring_cqe* cqe;
    if (io_uring_wait_cqe(&sync_ring_, &cqe) != 0) return false;
    int res = cqe->res;
    io_uring_cqe_seen(&sync_ring_, cqe);
    if (res == 0) return true;
    if (res != -EINTR && res != -EAGAIN) {
      last_error_ = -res;
      return false;
    }
  }
  last_error_ = EIO;
  return false;
}

}  // namespace nasd::fs::lfs
