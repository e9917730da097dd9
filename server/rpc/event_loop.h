// One io_uring instance driven by one thread. The loop knows nothing about RPC: owners
// (acceptors, connections, UDP endpoints) submit operations with a Completion object and are
// called back on the loop thread with the operation's result. Other threads hand work to the
// loop with post(), which wakes it through an eventfd.
//
// Shutdown: stop() asks the loop to cancel everything in flight; run() returns once every
// submitted operation has completed (or a grace period passed), so the buffers that owners
// lent to the kernel can be freed safely afterwards. After stop() new submissions are refused.
#pragma once

#include <liburing.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace nasd::rpc {

class EventLoop {
 public:
  class Completion {
   public:
    // `result` is the CQE result: bytes or a new fd on success, -errno on failure.
    virtual void on_complete(int result) = 0;

   protected:
    ~Completion() = default;
  };

  explicit EventLoop(unsigned queue_depth = 1024);  // throws std::system_error (eventfd)
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Creates the ring, then runs until stop() and the drain that follows it; the ring is torn
  // down before run() returns. Everything io_uring happens on this one thread, so the
  // kernel's task work for the ring never lands on (and interrupts) other threads.
  // Call from exactly one thread.
  void run();
  // Blocks until run() has created its ring: 0, or -errno when that failed (run() returned).
  int wait_started();
  // Thread-safe; returns immediately.
  void stop();
  // True on the loop thread once shutdown began: owners must not re-arm operations.
  bool stopping() const { return stopping_; }

  // Thread-safe. `fn` runs on the loop thread (never runs if the loop has already finished).
  void post(std::function<void()> fn);

  // Submission helpers, loop thread only. They return false (and submit nothing) once the loop
  // is stopping. The memory an operation refers to must stay valid until its completion.
  bool accept(int fd, sockaddr* addr, socklen_t* addr_len, Completion* c);
  bool recv(int fd, void* buf, size_t len, Completion* c);
  bool recvmsg(int fd, msghdr* msg, Completion* c);
  bool sendmsg(int fd, const msghdr* msg, int flags, Completion* c);
  // Completes with -ETIME after `delay` (the timespec must outlive the operation).
  bool timeout(__kernel_timespec* delay, Completion* c);

  size_t outstanding() const { return outstanding_; }

 private:
  class Wakeup : public Completion {
   public:
    explicit Wakeup(EventLoop* loop) : loop_(loop) {}
    void on_complete(int result) override;

   private:
    EventLoop* loop_;
  };

  io_uring_sqe* next_sqe();
  void track(io_uring_sqe* sqe, Completion* c);
  void arm_wakeup();
  void run_posted();
  void begin_stop();
  void drive();
  void reap();

  unsigned queue_depth_;
  io_uring ring_{};
  int wake_fd_ = -1;
  std::mutex started_mu_;
  std::condition_variable started_cv_;
  bool started_ = false;
  int start_error_ = 0;
  uint64_t wake_value_ = 0;
  Wakeup wakeup_{this};
  bool wakeup_armed_ = false;
  std::atomic<bool> wake_pending_{false};
  std::atomic<bool> stop_requested_{false};
  bool stopping_ = false;
  size_t outstanding_ = 0;

  std::mutex posted_mu_;
  std::vector<std::function<void()>> posted_;
};

}  // namespace nasd::rpc
