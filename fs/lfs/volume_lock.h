// VolumeLock: the reader/writer lock of one LfsVolume.
//
// A flush changes the volume's in-memory state (block pointers, inode map, segment usage)
// under the exclusive side and then writes the group it built to the device with the lock
// released: readers and writers both go on meanwhile, a writer changing a block of the group
// in flight writes a copy of it (Store::begin_flush states the rules). It used to downgrade to
// a shared hold that kept writers out for the whole device write.
//
// Meets the standard Lockable and SharedLockable requirements, so std::unique_lock and
// std::shared_lock work with it. Readers never wait for waiting writers (like the glibc
// rwlock the volume used before): the event loop's try_lock_shared() succeeds whenever no
// writer holds the lock. The internal mutex is held only for a few instructions.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <shared_mutex>  // std::shared_lock, used with it

namespace nasd::fs::lfs {

class VolumeLock {
 public:
  void lock() {
    std::unique_lock<std::mutex> g(m_);
    writers_cv_.wait(g, [&] { return !writer_ && readers_ == 0; });
    writer_ = true;
  }
  bool try_lock() {
    std::lock_guard<std::mutex> g(m_);
    if (writer_ || readers_ != 0) return false;
    writer_ = true;
    return true;
  }
  void unlock() {
    {
      std::lock_guard<std::mutex> g(m_);
      writer_ = false;
    }
    readers_cv_.notify_all();
    writers_cv_.notify_all();
  }

  void lock_shared() {
    std::unique_lock<std::mutex> g(m_);
    readers_cv_.wait(g, [&] { return !writer_; });
    ++readers_;
  }
  bool try_lock_shared() {
    std::lock_guard<std::mutex> g(m_);
    if (writer_) return false;
    ++readers_;
    return true;
  }
  void unlock_shared() {
    bool last;
    {
      std::lock_guard<std::mutex> g(m_);
      last = --readers_ == 0;
    }
    if (last) writers_cv_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable readers_cv_, writers_cv_;
  uint32_t readers_ = 0;
  bool writer_ = false;
};

}  // namespace nasd::fs::lfs
