#include "server/http/login_limiter.h"

#include <algorithm>

namespace nasd::http {

int64_t LoginLimiter::wait_ms(const std::string& client, int64_t now_ms) {
  std::lock_guard lock(mu_);
  auto it = clients_.find(client);
  if (it == clients_.end()) return 0;
  return std::max<int64_t>(it->second.blocked_until_ms - now_ms, 0);
}

void LoginLimiter::failed(const std::string& client, int64_t now_ms) {
  std::lock_guard lock(mu_);
  if (clients_.size() >= kMaxTracked && !clients_.count(client)) {
    auto oldest = std::min_element(clients_.begin(), clients_.end(), [](const auto& a, const auto& b) {
      return a.second.last_ms < b.second.last_ms;
    });
    clients_.erase(oldest);
  }
  Record& r = clients_[client];
  ++r.failures;
  r.last_ms = now_ms;
  if (r.failures > kFreeFailures) {
    int shift = std::min(r.failures - kFreeFailures - 1, 20);
    r.blocked_until_ms = now_ms + std::min(kFirstDelayMs << shift, kMaxDelayMs);
  }
}

void LoginLimiter::succeeded(const std::string& client) {
  std::lock_guard lock(mu_);
  clients_.erase(client);
}

}  // namespace nasd::http
