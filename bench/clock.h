// The one clock every measurement uses: monotonic, so NTP steps cannot bend a latency.
#pragma once

#include <chrono>
#include <cstdint>

namespace nasd::bench {

inline int64_t monotonic_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace nasd::bench
