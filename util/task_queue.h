// A fixed set of threads running queued tasks in submission order (one thread: strictly FIFO).
// Used wherever work must leave the thread that found it: the RPC executor (procedures block on
// disk I/O and must never run on an event loop), the interconnect's forwarded-call pool (bounded,
// so an overloaded owner refuses at once instead of queueing without limit), the membership's
// lease and volume queues (FIFO, and a hung SAN must not stall the heartbeats).
//
// Thread-safe. A task that throws is contained here (logged under the queue's room, the thread
// goes on): no exception may end the process from a worker thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace nasd::util {

class TaskQueue {
 public:
  // What stop() does with tasks that have not started.
  enum class AtStop { RunQueued, DropQueued };

  struct Options {
    size_t threads = 1;
    size_t max_queued = 0;  // 0: unbounded
    AtStop at_stop = AtStop::RunQueued;
    std::string room = "util";  // where a task's escaped exception is logged
  };

  explicit TaskQueue(Options options);
  ~TaskQueue();  // stop()
  TaskQueue(const TaskQueue&) = delete;
  TaskQueue& operator=(const TaskQueue&) = delete;

  // Queues a task. False (the task was not taken) when the queue is full or stop() has begun.
  bool submit(std::function<void()> task);
  // Stops taking tasks, runs or drops what is queued (Options::at_stop), lets the running ones
  // finish and joins. Idempotent; not from one of the queue's own tasks.
  void stop();

  size_t thread_count() const { return threads_.size(); }
  size_t queued() const;

 private:
  void run();

  const Options options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::mutex join_mu_;
  std::vector<std::thread> threads_;  // fixed after construction
};

}  // namespace nasd::util
