// Slows password guessing on the management page: after kFreeFailures failed logins from one
// client address, further attempts from it are refused (without checking the password) for a
// delay that doubles with each failure, up to kMaxDelayMs; a success clears the address. A
// global limit on failures per minute covers an attacker with many addresses. At most
// kMaxTracked addresses are remembered (the oldest record goes first), so memory is bounded.
//
// Pure: the caller passes the time; the limiter locks itself.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace nasd::http {

class LoginLimiter {
 public:
  static constexpr int kFreeFailures = 3;
  static constexpr int64_t kFirstDelayMs = 1000;
  static constexpr int64_t kMaxDelayMs = 5 * 60 * 1000;
  static constexpr int kGlobalFailuresPerMinute = 60;
  static constexpr size_t kMaxTracked = 4096;

  // 0 when `client` may try now, else how many milliseconds it must wait.
  int64_t wait_ms(const std::string& client, int64_t now_ms);
  void failed(const std::string& client, int64_t now_ms);
  void succeeded(const std::string& client);

 private:
  struct Record {
    int failures = 0;
    int64_t blocked_until_ms = 0, last_ms = 0;
  };
  std::mutex mu_;
  std::map<std::string, Record> clients_;
  int64_t window_start_ms_ = 0;
  int window_failures_ = 0;
};

}  // namespace nasd::http
