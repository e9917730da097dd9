// Open-loop pacing: requests are due on a fixed schedule that does not depend on when replies
// come back, so a slow server sees the offered load pile up instead of the client backing off.
#pragma once

#include <cstdint>

namespace nasd::bench {

// Times are nanoseconds on the monotonic clock (see clock.h).
class PacingSchedule {
 public:
  PacingSchedule() = default;
  // `rate` requests per second from `start_ns`. The k-th request (k = 0, 1, ...) is due at
  // start + (k + phase) / rate; a phase in [0, 1) staggers workers that share one total rate.
  PacingSchedule(int64_t start_ns, double rate, double phase);

  int64_t due(uint64_t k) const;
  // How many requests are due at or before `now_ns`, i.e. what should have been issued so far.
  uint64_t due_by(int64_t now_ns) const;
  double rate() const { return rate_; }

 private:
  int64_t start_ns_ = 0;
  double rate_ = 0;
  double phase_ = 0;
};

}  // namespace nasd::bench
