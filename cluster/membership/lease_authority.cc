#include "cluster/membership/lease_authority.h"

#include <algorithm>
#include <chrono>

namespace nasd::membership {

int64_t LeaseAuthority::now_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool apply_acquire(Lease& lease, const std::string& node, int64_t now_ms, int64_t duration_ms) {
  bool free = lease.holder.empty() || now_ms >= lease.expires_ms;
  if (!free && lease.holder != node) return false;
  if (lease.holder != node) {
    lease.holder = node;
    ++lease.epoch;
  }
  // Never shortened: a late-processed renewal must not cut a lease the holder relies on.
  lease.expires_ms = std::max(lease.expires_ms, now_ms + duration_ms);
  return true;
}

bool apply_release(Lease& lease, const std::string& node) {
  if (lease.holder != node) return false;
  lease.holder.clear();
  lease.expires_ms = 0;
  return true;
}

}  // namespace nasd::membership
