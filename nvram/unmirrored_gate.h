// What a journal with a mirror asks before it acknowledges records its mirror does not hold
// (mirror lost under `mirror_policy = continue`). In a failover cluster the node's gate records
// at the lease authority that its mirror is stale (cluster/stale_mirror_gate.h), so the partner
// will not take over from that copy and lose the acknowledged writes. Without a gate the journal
// acknowledges them at once, as a single node does.
#pragma once

#include <cstdint>

namespace nasd::nvram {

class UnmirroredGate {
 public:
  virtual ~UnmirroredGate() = default;
  // True: records before `end` may be acknowledged although the mirror lacks some of them.
  // False: refuse them (the journal answers JUKEBOX; the client retries). Called without the
  // journal's lock; must return within a bounded time (a hung authority is a refusal).
  virtual bool admit_unmirrored(uint64_t end) = 0;
  // The mirror holds every record before `end` (durably). Called under the journal's lock on
  // every mirror ack: must not wait.
  virtual void mirror_holds(uint64_t end) = 0;
};

}  // namespace nasd::nvram
