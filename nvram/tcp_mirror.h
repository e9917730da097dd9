// TcpMirror: the journal's side of the mirror link. Records go out as framed messages over
// one TCP connection without waiting for each ack (many records in flight); a reader thread
// turns the partner's cumulative acks into Listener::mirror_acked(). When the link drops the
// listener hears mirror_lost() and the mirror reconnects in the background, resynchronising
// from what the partner says it holds. Every connection is authenticated with the cluster key
// (the partner must prove it under the name `peer`) and every frame carries a tag.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nvram/mirror.h"
#include "util/link_handshake.h"

namespace nasd::nvram {

class TcpMirror : public Mirror {
 public:
  struct Options {
    std::chrono::milliseconds connect_timeout{1000};
    std::chrono::milliseconds hello_timeout{2000};
    std::chrono::milliseconds retry_min{50};
    std::chrono::milliseconds retry_max{1000};
    link::Credentials credentials;  // required: the cluster key and this node's name
    std::string peer = "mirror";    // the mirror's name (a pair: the partner node's name)
    std::string source = "";        // the address the link leaves from (empty: the kernel's)
  };

  // `address` is "host:port". Throws std::invalid_argument on a malformed address.
  // Throws std::invalid_argument on a malformed address or missing credentials.
  TcpMirror(const std::string& address, Options options);
  ~TcpMirror() override;

  void start(Listener* listener) override;
  bool replicate(std::span<const RecordView> records) override;
  void trim(uint64_t head) override;
  void reset(const std::string& why) override;
  void stop() override;
  std::string describe() const override { return address_; }

 private:
  void run();
  // One connection's life: hello, then acks until it breaks. Returns why it ended.
  std::string serve_connection(int fd);
  // Sends one frame (sealed) on the current connection.
  bool send(std::vector<uint8_t>& frame);
  void sleep_backoff(std::chrono::milliseconds d);

  const std::string address_;
  std::string host_;
  uint16_t port_ = 0;
  Options options_;  // set once in the constructor
  Listener* listener_ = nullptr;

  std::mutex send_mu_;   // one writer on the socket at a time
  int fd_ = -1;          // usable for sending (guarded by send_mu_)
  link::FrameSealer sealer_;  // the current connection's (guarded by send_mu_)

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  std::atomic<bool> stop_{false};
  std::atomic<int> live_fd_{-1};  // for reset()/stop() to interrupt the reader
  std::thread thread_;
};

}  // namespace nasd::nvram
