#include "nvram/write_behind.h"

namespace nasd::nvram {

WriteBehind::WriteBehind(std::function<void()> work, std::chrono::milliseconds interval)
    : work_(std::move(work)), interval_(interval) {}

WriteBehind::~WriteBehind() { stop(); }

void WriteBehind::start() {
  std::lock_guard lk(mu_);
  if (thread_.joinable() || stop_) return;
  thread_ = std::thread([this] { run(); });
}

void WriteBehind::nudge() {
  std::lock_guard lk(mu_);
  nudged_ = true;
  cv_.notify_one();
}

void WriteBehind::stop() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

uint64_t WriteBehind::rounds() const {
  std::lock_guard lk(mu_);
  return rounds_;
}

void WriteBehind::run() {
  std::unique_lock lk(mu_);
  while (!stop_) {
    cv_.wait_for(lk, interval_, [this] { return nudged_ || stop_; });
    if (stop_) break;
    nudged_ = false;
    lk.unlock();
    work_();
    lk.lock();
    ++rounds_;
  }
}

}  // namespace nasd::nvram
