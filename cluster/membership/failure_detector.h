// Decides that the partner is dead: it is suspected once `missed_limit` heartbeat intervals
// pass without hearing from it. Pure (time is passed in) so simulations can drive it.
// Suspicion is only a hint: it starts fencing, and only the lease authority decides.
#pragma once

#include <cstdint>

namespace nasd::membership {

class FailureDetector {
 public:
  // Counts silence from `start_ms`, so a partner that never shows up is suspected too.
  FailureDetector(int64_t interval_ms, int missed_limit, int64_t start_ms)
      : timeout_ms_(interval_ms * missed_limit), last_heard_ms_(start_ms) {}

  void heard(int64_t now_ms) {
    if (now_ms > last_heard_ms_) last_heard_ms_ = now_ms;
  }
  bool suspects(int64_t now_ms) const { return now_ms - last_heard_ms_ >= timeout_ms_; }
  int64_t last_heard_ms() const { return last_heard_ms_; }
  int64_t timeout_ms() const { return timeout_ms_; }

 private:
  const int64_t timeout_ms_;
  int64_t last_heard_ms_;
};

}  // namespace nasd::membership
