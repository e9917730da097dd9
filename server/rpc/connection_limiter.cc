#include "server/rpc/connection_limiter.h"

#include <netinet/in.h>

namespace nasd::rpc {

std::string ConnectionLimiter::address_key(const sockaddr_storage& peer) {
  if (peer.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(peer);
    return std::string(reinterpret_cast<const char*>(&in.sin_addr), sizeof in.sin_addr);
  }
  if (peer.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(peer);
    // An IPv4-mapped address counts as the IPv4 address it carries.
    if (IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr))
      return std::string(reinterpret_cast<const char*>(&in6.sin6_addr) + 12, 4);
    return std::string(reinterpret_cast<const char*>(&in6.sin6_addr), sizeof in6.sin6_addr);
  }
  return {};  // other families (unix sockets in tests) share one bucket
}

bool ConnectionLimiter::admit(const sockaddr_storage& peer) {
  const std::string key = address_key(peer);
  std::lock_guard lock(mu_);
  if (max_total_ != 0 && total_ >= max_total_) return false;
  size_t& n = per_address_[key];
  if (max_per_address_ != 0 && n >= max_per_address_) {
    if (n == 0) per_address_.erase(key);
    return false;
  }
  ++n;
  ++total_;
  return true;
}

void ConnectionLimiter::release(const sockaddr_storage& peer) {
  const std::string key = address_key(peer);
  std::lock_guard lock(mu_);
  auto it = per_address_.find(key);
  if (it == per_address_.end()) return;
  if (--it->second == 0) per_address_.erase(it);
  if (total_ > 0) --total_;
}

size_t ConnectionLimiter::total() const {
  std::lock_guard lock(mu_);
  return total_;
}

size_t ConnectionLimiter::from(const sockaddr_storage& peer) const {
  std::lock_guard lock(mu_);
  auto it = per_address_.find(address_key(peer));
  return it == per_address_.end() ? 0 : it->second;
}

}  // namespace nasd::rpc
