// MirrorServer: the partner side of the mirror link. It keeps a region file laid out exactly
// like the primary's (same size, same record positions), so the partner can later replay it
// with the ordinary Journal code, or dump it. One primary at a time; acks are cumulative and
// sent once per batch of received frames, after the batch is durable for the mode.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nvram/mirror.h"
#include "nvram/region.h"

namespace nasd::nvram {

class MirrorServer {
 public:
  // Opens `region_path` if it exists (to resume after a restart); it is (re)created when the
  // first primary says hello with another identity.
  MirrorServer(std::string region_path, DurabilityMode mode);
  ~MirrorServer();

  // Binds host:port (port 0 picks one). Returns the port; throws std::runtime_error.
  uint16_t listen(const std::string& host, uint16_t port);
  // Serves primaries one after another until stop(). Call from one thread.
  void serve();
  // Makes serve() return soon (safe from a signal-handling thread).
  void stop();

  // Position up to which this mirror holds records.
  uint64_t tail() const;

 private:
  void serve_connection(int fd);
  std::string handle_hello(const MirrorHello& hello, uint64_t* resume);
  std::string handle_records(const std::vector<uint8_t>& body);
  void handle_trim(uint64_t head);
  bool persist_and_ack(int fd);

  const std::string path_;
  const DurabilityMode mode_;
  std::unique_ptr<Region> region_;
  mutable std::mutex mu_;  // region state, for tail() from other threads
  uint64_t head_ = 0, tail_ = 0, persisted_ = 0;
  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<int> conn_fd_{-1};
};

}  // namespace nasd::nvram
