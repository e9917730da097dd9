#include "util/task_queue.h"

#include <exception>

#include "util/log.h"

namespace nasd::util {

TaskQueue::TaskQueue(Options options) : options_(std::move(options)) {
  const size_t n = options_.threads ? options_.threads : 1;
  threads_.reserve(n);
  for (size_t i = 0; i < n; ++i) threads_.emplace_back([this] { run(); });
}

TaskQueue::~TaskQueue() { stop(); }

bool TaskQueue::submit(std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return false;
    if (options_.max_queued != 0 && tasks_.size() >= options_.max_queued) return false;
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
  return true;
}

void TaskQueue::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (options_.at_stop == AtStop::DropQueued) tasks_.clear();
  }
  cv_.notify_all();
  std::lock_guard joining(join_mu_);  // two stop() calls never join one thread twice
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

size_t TaskQueue::queued() const {
  std::lock_guard lock(mu_);
  return tasks_.size();
}

void TaskQueue::run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and nothing left to run
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    try {
      task();
    } catch (const std::exception& e) {
      log(options_.room).error(std::string("a queued task failed: ") + e.what());
    } catch (...) {
      log(options_.room).error("a queued task failed with an unknown exception");
    }
  }
}

}  // namespace nasd::util
