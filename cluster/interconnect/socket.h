// A connected TCP socket shared by the reader thread and every sender of one connection.
// Sends are serialized so frames from concurrent callers never interleave; `shutdown()` makes a
// blocked reader return at once, which is how connections are dropped and services stopped.
// The fd is closed only when the last owner lets go, so a late sender can never write into a
// newer connection that happened to reuse the descriptor number.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>

#include "util/net.h"

namespace nasd::interconnect {

class Socket {
 public:
  // Takes ownership of `fd`. `send_timeout`: a peer that stops reading fails our sends after
  // this long instead of blocking every caller behind the write lock.
  Socket(int fd, std::chrono::milliseconds send_timeout);
  ~Socket();
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool send_all(std::span<const uint8_t> bytes, std::string* error);
  void shutdown();

 private:
  const int fd_;
  std::mutex write_mu_;
};

// The connections are made and read with the shared helpers (util/net.h, IPv4 and IPv6).
using util::connect_tcp;
using util::listen_tcp;
using util::read_exact;
using util::ReadStatus;

}  // namespace nasd::interconnect
