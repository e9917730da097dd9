// VolumeLock: the reader/writer lock of one LfsVolume, with one extra move: a holder of the
// exclusive side may downgrade() it to a shared hold that still keeps every other writer out.
//
// Why: a flush changes the volume's in-memory state (block pointers, inode map, segment usage)
// and then writes the group it built to the device. The first part needs the exclusive side;
// the device write only needs the group's blocks to stay unchanged, which no reader can change.
// Downgrading for the write lets GETATTR, LOOKUP, ACCESS and cached READ run (on the event
// loops too) while the disk works, instead of waiting for a whole flush of up to a
// write-behind's worth of data. Writers still wait: the blocks in flight are cache blocks they
// would change (copy-on-write of in-flight blocks is the next step).
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
    writers_cv_.wait(g, [&] { return !writer_ && !reserved_ && readers_ == 0; });
    writer_ = true;
  }
  bool try_lock() {
    std::lock_guard<std::mutex> g(m_);
    if (writer_ || reserved_ || readers_ != 0) return false;
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

  // Exclusive -> shared, atomically, keeping other writers out until unlock_downgraded().
  // Precondition: the caller holds the exclusive side.
  void downgrade() {
    {
      std::lock_guard<std::mutex> g(m_);
      writer_ = false;
      reserved_ = true;
      ++readers_;
    }
    readers_cv_.notify_all();
  }
  // Releases a downgraded hold.
  void unlock_downgraded() {
    {
      std::lock_guard<std::mutex> g(m_);
      reserved_ = false;
      --readers_;
    }
    writers_cv_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable readers_cv_, writers_cv_;
  uint32_t readers_ = 0;
  bool writer_ = false;
  bool reserved_ = false;  // a downgraded writer holds the writer slot
};

}  // namespace nasd::fs::lfs
