// TEST FIXTURE ONLY: holds the only thread of an executor, so that a test can show that calls
// were answered without it (run to completion on the event loop and the link's reader).
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "util/task_queue.h"

namespace nasd::cluster::testing {

// Holds an executor's only thread from construction until let_go() (at the latest, the end of
// the scope): a call that needed the executor meanwhile would never be answered.
class HeldExecutor {
 public:
  explicit HeldExecutor(util::TaskQueue& executor) : state_(std::make_shared<State>()) {
    // The task shares the state: it may still be leaving its wait after this object is gone.
    if (!executor.submit([state = state_] {
          std::unique_lock lock(state->mu);
          state->holding = true;
          state->cv.notify_all();
          state->cv.wait(lock, [&] { return state->released; });
        }))
      return;
    std::unique_lock lock(state_->mu);
    state_->cv.wait_for(lock, std::chrono::seconds(5), [this] { return state_->holding; });
  }
  ~HeldExecutor() { let_go(); }
  bool holding() {
    std::lock_guard lock(state_->mu);
    return state_->holding;
  }
  void let_go() {
    std::lock_guard lock(state_->mu);
    state_->released = true;
    state_->cv.notify_all();
  }

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    bool holding = false, released = false;
  };
  std::shared_ptr<State> state_;
};

}  // namespace nasd::cluster::testing
