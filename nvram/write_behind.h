// The write-behind thread: runs the journal's "flush the file systems, then trim" step whenever
// it is nudged (log over its fill threshold, or writers waiting for space) and on a timer, so
// that the log drains even when nobody pushes it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace nasd::nvram {

class WriteBehind {
 public:
  WriteBehind(std::function<void()> work, std::chrono::milliseconds interval);
  ~WriteBehind();

  void start();
  // Runs the work soon (coalesces with a pending or running round).
  void nudge();
  // Waits for the running round (if any) and stops the thread.
  void stop();
  uint64_t rounds() const;

 private:
  void run();

  std::function<void()> work_;
  std::chrono::milliseconds interval_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool nudged_ = false;
  bool stop_ = false;
  uint64_t rounds_ = 0;
  std::thread thread_;
};

}  // namespace nasd::nvram
