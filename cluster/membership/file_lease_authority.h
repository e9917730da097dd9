// A LeaseAuthority kept in files on the shared backing folder (the "SAN"): one small record per
// volume, `<dir>/volume-<id>.lease`, read and rewritten under an exclusive flock so that two
// nodes' acquire attempts are serialized. The flock is held only for the read-modify-write;
// ownership itself lives in the record (holder, epoch, expiry), so a node that hangs or loses
// the SAN loses its lease by expiry, which a lock tied to a process could not express.
//
// Expiry uses the wall clock (CLOCK_REALTIME), which every node on one machine shares; across
// machines their clock skew must stay well below the lease safety margin.
#pragma once

#include <functional>
#include <string>

#include "cluster/membership/lease_authority.h"

namespace nasd::membership {

class FileLeaseAuthority : public LeaseAuthority {
 public:
  using Clock = std::function<int64_t()>;  // milliseconds

  // `dir` must exist. `clock` defaults to the wall clock.
  explicit FileLeaseAuthority(std::string dir, Clock clock = {});

  LeaseAnswer acquire(uint32_t volume_id, const std::string& node, int64_t duration_ms) override;
  bool release(uint32_t volume_id, const std::string& node) override;
  bool inspect(uint32_t volume_id, Lease* out, std::string* error) override;
  int64_t now_ms() const override { return clock_(); }

  std::string path_of(uint32_t volume_id) const;

 private:
  // Runs `change` on the record under the file lock and writes it back if it returns true.
  LeaseAnswer update(uint32_t volume_id, const std::function<bool(Lease&)>& change);

  const std::string dir_;
  const Clock clock_;
};

// Text form of a record: "nasd-lease 1 <epoch> <expires_ms> <holder>\n" (node names contain no
// white space). A record that does not parse is reported, never guessed at.
std::string format_lease(const Lease& lease);
bool parse_lease(const std::string& text, Lease* out);

}  // namespace nasd::membership
