// One background thread running tasks in submission order. The membership service uses one
// for lease requests (the state machine requires them carried out FIFO, and a hung SAN must
// not stall heartbeats) and one for opening/closing volumes (journal replay can take long).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace nasd::membership {

class SerialExecutor {
 public:
  SerialExecutor();
  ~SerialExecutor();  // drops what has not started, joins
  SerialExecutor(const SerialExecutor&) = delete;
  SerialExecutor& operator=(const SerialExecutor&) = delete;

  void post(std::function<void()> task);
  // Stops taking tasks; the running one finishes. Idempotent.
  void stop();

 private:
  void run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace nasd::membership
