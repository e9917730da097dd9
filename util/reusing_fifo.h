// A first-in first-out queue that keeps its storage. std::deque frees a block when its front
// empties and allocates one when its back fills, so a queue that is mostly empty or holds one
// element (an event loop's received records, a connection's replies to send) allocates every
// few dozen pushes. This one is a vector and a read position: popping moves the position, and
// when the queue empties the vector is cleared, keeping its capacity. Steady state: no
// allocation at all.
//
// Not thread-safe (its owner serializes). Elements are moved out by pop_front(); iteration
// runs from the front to the back.
#pragma once

#include <cassert>
#include <cstddef>
#include <utility>
#include <vector>

namespace nasd::util {

template <class T>
class ReusingFifo {
 public:
  bool empty() const { return head_ == items_.size(); }
  size_t size() const { return items_.size() - head_; }

  void push_back(T item) {
    // A queue that never empties would grow without bound at the back: drop the popped front
    // once it is at least half of the vector (amortised O(1)).
    if (head_ > 0 && head_ * 2 >= items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    items_.push_back(std::move(item));
  }

  T& front() {
    assert(!empty());
    return items_[head_];
  }
  const T& front() const {
    assert(!empty());
    return items_[head_];
  }

  // Precondition: !empty(). Releases what the front held (it is destroyed or moved out).
  void pop_front() {
    assert(!empty());
    items_[head_] = T();
    if (++head_ == items_.size()) clear();
  }

  void clear() {
    items_.clear();
    head_ = 0;
  }

  auto begin() { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  auto end() { return items_.end(); }
  auto begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  auto end() const { return items_.end(); }

 private:
  std::vector<T> items_;
  size_t head_ = 0;  // items_[0, head_) are popped (empty husks)
};

}  // namespace nasd::util
