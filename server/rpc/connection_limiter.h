// Caps TCP connections per client address and in total, so that one noisy client (or a flood of
// idle connections) cannot use up the server's descriptors and memory while others are locked
// out. Connections over a cap are accepted and closed at once: the client sees a reset and
// retries later, and no state is kept for it. Thread-safe: every event loop's acceptors share
// one limiter (and the servers of one node may share one too).
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace nasd::rpc {

class ConnectionLimiter {
 public:
  // 0 means no cap.
  ConnectionLimiter(size_t max_total, size_t max_per_address)
      : max_total_(max_total), max_per_address_(max_per_address) {}
  ConnectionLimiter(const ConnectionLimiter&) = delete;
  ConnectionLimiter& operator=(const ConnectionLimiter&) = delete;

  // Counts the connection in, or returns false (counting nothing) when a cap is reached.
  bool admit(const sockaddr_storage& peer);
  // For each admit() that returned true, once the connection is gone.
  void release(const sockaddr_storage& peer);

  size_t total() const;
  size_t from(const sockaddr_storage& peer) const;

 private:
  static std::string address_key(const sockaddr_storage& peer);  // the address, not the port

  const size_t max_total_;
  const size_t max_per_address_;
  mutable std::mutex mu_;
  size_t total_ = 0;
  std::unordered_map<std::string, size_t> per_address_;
};

}  // namespace nasd::rpc
