#include "util/periodic_worker.h"

#include <exception>

#include "util/log.h"

namespace nasd::util {

PeriodicWorker::PeriodicWorker(std::string room, std::chrono::milliseconds interval,
                               std::function<void()> work)
    : room_(std::move(room)), interval_(interval), work_(std::move(work)) {}

PeriodicWorker::~PeriodicWorker() { stop(); }

void PeriodicWorker::start() {
  std::lock_guard lk(mu_);
  if (thread_.joinable() || stop_) return;
  thread_ = std::thread([this] { run(); });
}

void PeriodicWorker::nudge() {
  {
    std::lock_guard lk(mu_);
    nudged_ = true;
  }
  cv_.notify_one();
}

void PeriodicWorker::stop() {
  std::thread joining;
  {
    std::lock_guard lk(mu_);
    stop_ = true;
    if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id())
      joining = std::move(thread_);
  }
  cv_.notify_one();
  if (joining.joinable()) joining.join();
}

uint64_t PeriodicWorker::rounds() const {
  std::lock_guard lk(mu_);
  return rounds_;
}

void PeriodicWorker::run() {
  std::unique_lock lk(mu_);
  while (!stop_) {
    cv_.wait_for(lk, interval_, [this] { return nudged_ || stop_; });
    if (stop_) break;
    nudged_ = false;
    lk.unlock();
    try {
      work_();
    } catch (const std::exception& e) {
      log(room_).error(std::string("periodic work failed: ") + e.what());
    }
    lk.lock();
    ++rounds_;
  }
}

}  // namespace nasd::util
