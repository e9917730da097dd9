// The volume's background thread: write-behind of unstable data and journalled operations,
// periodic checkpoints, and cleaning when free segments run low.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace nasd::fs::lfs {

class LfsVolume;

class BackgroundWorker {
 public:
  explicit BackgroundWorker(LfsVolume* vol);
  ~BackgroundWorker();  // stops and joins
  // Asks for a pass now (e.g. when dirty data piles up).
  void poke();

 private:
  void run();
  void pass();

  LfsVolume* vol_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool poked_ = false;
  std::chrono::steady_clock::time_point last_checkpoint_;
  std::thread thread_;
};

}  // namespace nasd::fs::lfs
