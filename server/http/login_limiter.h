// Slows password (and scrape token) guessing on the management page: after kFreeFailures failed
// logins from one client address, further attempts from it are refused (without checking the
// password) for a delay that doubles with each failure, up to kMaxDelayMs; a success clears the
// address. The limit is per address only: a global one let an attacker with a few addresses
// lock the real admin out (3 failures from each of 20 addresses did). Guessing from many
// addresses is left to the secret's strength (nasd-passwd --random: 20 characters of 57, about
// 116 bits; the token 256 bits). At most kMaxTracked addresses are remembered (the oldest record
// goes first), so memory is bounded.
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
};

}  // namespace nasd::http
