#include "util/reusing_fifo.h"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <random>

namespace nasd::util {
namespace {

// The same pushes and pops as a std::deque, in a random order: the same elements come out.
TEST(ReusingFifo, BehavesAsAQueue) {
  ReusingFifo<std::unique_ptr<int>> fifo;
  std::deque<int> model;
  std::mt19937 rng(7);
  int next = 0;
  for (int step = 0; step < 20000; ++step) {
    if (model.empty() || rng() % 3 != 0) {
      fifo.push_back(std::make_unique<int>(next));
      model.push_back(next++);
    } else {
      ASSERT_EQ(*fifo.front(), model.front());
      std::unique_ptr<int> out = std::move(fifo.front());
      fifo.pop_front();
      ASSERT_EQ(*out, model.front());
      model.pop_front();
    }
    ASSERT_EQ(fifo.size(), model.size());
    ASSERT_EQ(fifo.empty(), model.empty());
  }
  size_t i = 0;
  for (const auto& p : fifo) ASSERT_EQ(*p, model[i++]) << "iteration runs front to back";
}

// One in, one out, forever (an event loop's records): the storage is never reallocated, and a
// popped element is released at once.
TEST(ReusingFifo, KeepsItsStorageWhenItEmpties) {
  ReusingFifo<std::shared_ptr<int>> fifo;
  fifo.push_back(std::make_shared<int>(0));
  const std::shared_ptr<int>* slot = &fifo.front();
  fifo.pop_front();
  for (int i = 1; i < 1000; ++i) {
    auto value = std::make_shared<int>(i);
    std::weak_ptr<int> watch = value;
    fifo.push_back(std::move(value));
    ASSERT_EQ(&fifo.front(), slot) << "the storage moved at push " << i;
    fifo.pop_front();
    ASSERT_TRUE(watch.expired()) << "a popped element is still held";
  }
}

// A popped element is released at once also while others wait behind it (a sent reply must not
// pin its cache blocks until the queue empties).
TEST(ReusingFifo, ReleasesThePoppedFrontWhileOthersWait) {
  ReusingFifo<std::shared_ptr<int>> fifo;
  auto first = std::make_shared<int>(1);
  std::weak_ptr<int> watch = first;
  fifo.push_back(std::move(first));
  fifo.push_back(std::make_shared<int>(2));
  fifo.pop_front();
  EXPECT_TRUE(watch.expired()) << "the popped front is held until the queue empties";
  EXPECT_EQ(*fifo.front(), 2);
}

}  // namespace
}  // namespace nasd::util
