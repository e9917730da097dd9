// A bound on the forwarded calls that may be in flight to one owner node at the same time,
// shared by every RemoteVolume of that owner. A forwarded NFS call no longer holds an executor
// thread while it waits (it parks, util/resumable_call.h), so the bound is no longer about
// threads: it caps the requests queued at a slow or paused owner, the memory of the parked
// calls, and how much work one owner's hiccup can pile up behind the link. A call that finds
// no free slot is answered Jukebox at once (the client retries later) instead of queueing.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace nasd::interconnect {

class ForwardSlots {
 public:
  explicit ForwardSlots(size_t slots) : slots_(slots == 0 ? 1 : slots) {}
  ForwardSlots(const ForwardSlots&) = delete;
  ForwardSlots& operator=(const ForwardSlots&) = delete;

  // False (and counted as refused) when every slot is taken; never blocks.
  bool try_acquire() {
    size_t used = in_use_.load();
    do {
      if (used >= slots_) {
        refused_.fetch_add(1);
        return false;
      }
    } while (!in_use_.compare_exchange_weak(used, used + 1));
    return true;
  }
  void release() { in_use_.fetch_sub(1); }

  size_t capacity() const { return slots_; }
  size_t in_use() const { return in_use_.load(); }
  uint64_t refused() const { return refused_.load(); }

 private:
  const size_t slots_;
  std::atomic<size_t> in_use_{0};
  std::atomic<uint64_t> refused_{0};
};

}  // namespace nasd::interconnect
