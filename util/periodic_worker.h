// One background thread that runs `work` every `interval`, and sooner when nudged (nudges that
// arrive while a round runs coalesce into one more round). Used for the LFS volume's
// write-behind/checkpoint/cleaning pass and the NVRAM journal's flush-and-trim step.
//
// Thread-safe. `work` runs without any lock of the worker held; an exception it throws is
// contained (logged under `room`), the thread goes on.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace nasd::util {

class PeriodicWorker {
 public:
  PeriodicWorker(std::string room, std::chrono::milliseconds interval, std::function<void()> work);
  ~PeriodicWorker();  // stop()
  PeriodicWorker(const PeriodicWorker&) = delete;
  PeriodicWorker& operator=(const PeriodicWorker&) = delete;

  // Starts the thread (once; not after stop()).
  void start();
  // Runs the work soon (coalesces with a pending round).
  void nudge();
  // Waits for the running round (if any) and joins. Idempotent; a no-op from the worker's own
  // thread (it ends after the round).
  void stop();
  // Rounds completed so far.
  uint64_t rounds() const;

 private:
  void run();

  const std::string room_;
  const std::chrono::milliseconds interval_;
  const std::function<void()> work_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool nudged_ = false;
  bool stop_ = false;
  uint64_t rounds_ = 0;
  std::thread thread_;
};

}  // namespace nasd::util
