// The fencing authority: the one place that decides which node may serve a volume. Every
// volume has a lease (holder, epoch, expiry) kept on storage both nodes reach (the "SAN"); a
// node serves a volume only while it holds an unexpired lease, and the authority grants a lease
// to another node only after the current one expired. A node that cannot reach the authority
// cannot renew, so it stops serving before anybody else may start: that is what prevents two
// nodes of a partitioned pair from both serving a volume.
#pragma once

#include <cstdint>
#include <string>

namespace nasd::membership {

struct Lease {
  std::string holder;      // "" = free
  uint64_t epoch = 0;      // +1 whenever the holder changes: a fencing token for the volume
  int64_t expires_ms = 0;  // on the authority's clock (LeaseAuthority::now_ms())
};

enum class LeaseVerdict {
  Granted,      // the caller holds the lease until `lease.expires_ms`
  HeldByOther,  // someone else holds an unexpired lease (`lease` says who)
  Unreachable,  // the authority could not be consulted: assume nothing
};

struct LeaseAnswer {
  LeaseVerdict verdict = LeaseVerdict::Unreachable;
  Lease lease;
  std::string error;  // why, for Unreachable
};

class LeaseAuthority {
 public:
  virtual ~LeaseAuthority() = default;
  // Acquires or renews: granted when the lease is free, expired, or already the caller's.
  virtual LeaseAnswer acquire(uint32_t volume_id, const std::string& node,
                              int64_t duration_ms) = 0;
  // Gives the lease up early (failback) if the caller holds it; false if it did not.
  virtual bool release(uint32_t volume_id, const std::string& node) = 0;
  // The current record, for status and tests; false (and *error) if it cannot be read.
  virtual bool inspect(uint32_t volume_id, Lease* out, std::string* error) = 0;
  // The clock `Lease::expires_ms` is on, in milliseconds (default: the wall clock), so a
  // status line can say how long a lease has left.
  virtual int64_t now_ms() const;
  // True when `Lease::epoch` may stand as the storage fence's token (VolumeFence): it grows
  // with every new holder and never repeats, across restarts of every node.
  virtual bool epochs_fence() const { return false; }
};

// The grant rule every authority applies to a record, so the file and the simulated one agree.
// Updates `lease` in place and says whether the caller now holds it.
bool apply_acquire(Lease& lease, const std::string& node, int64_t now_ms, int64_t duration_ms);
bool apply_release(Lease& lease, const std::string& node);

}  // namespace nasd::membership
