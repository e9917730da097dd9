// A fixed pool of threads that run Service::dispatch. Procedures block on disk I/O, so they
// must never run on an event loop thread; the loops hand work here and get the reply back
// through their own post() queue.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace nasd::rpc {

class Executor {
 public:
  explicit Executor(size_t threads);
  ~Executor();  // stop()
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Queues a task. Returns false (and drops it) once stop() has begun.
  bool submit(std::function<void()> task);
  // Runs every task already queued, then joins the threads. Idempotent.
  void stop();

  size_t thread_count() const { return threads_.size(); }
  size_t queued() const;

 private:
  void worker();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace nasd::rpc
