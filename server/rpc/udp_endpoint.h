// RPC over UDP on one bound socket, for one event loop: each datagram is one call, and the
// reply goes back to the datagram's sender from the same socket. Several loops may run an
// endpoint on the same socket. There is no connection to push back on, so when too many calls
// from this endpoint are executing, further datagrams are dropped; UDP clients retransmit.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "server/rpc/call_dispatcher.h"
#include "server/rpc/call_stats.h"
#include "server/rpc/event_loop.h"

namespace nasd::rpc {

class UdpEndpoint {
 public:
  // Does not own `fd`.
  UdpEndpoint(EventLoop& loop, int fd, uint16_t port, CallDispatcher& dispatcher,
              CallStats& stats, size_t max_in_flight);
  ~UdpEndpoint();
  UdpEndpoint(const UdpEndpoint&) = delete;
  UdpEndpoint& operator=(const UdpEndpoint&) = delete;

  void start();  // loop thread only

 private:
  class RecvOp : public EventLoop::Completion {
   public:
    explicit RecvOp(UdpEndpoint* e) : e_(e) {}
    void on_complete(int result) override { e_->on_datagram(result); }

   private:
    UdpEndpoint* e_;
  };
  struct SendOp;

  void arm_recv();
  void on_datagram(int result);
  void send(const CallOrigin& to, CallDispatcher::Reply reply);

  EventLoop& loop_;
  int fd_;
  uint16_t port_;
  sockaddr_storage local_{};
  socklen_t local_len_ = 0;
  CallDispatcher& dispatcher_;
  CallStats& stats_;
  size_t max_in_flight_;
  size_t in_flight_ = 0;
  size_t sends_pending_ = 0;

  std::vector<uint8_t> buf_;
  sockaddr_storage peer_{};
  iovec iov_{};
  msghdr msg_{};
  RecvOp recv_op_{this};
};

}  // namespace nasd::rpc
