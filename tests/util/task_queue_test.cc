// util::TaskQueue and util::PeriodicWorker: the one task queue and the one periodic worker of
// every room.
#include "util/periodic_worker.h"
#include "util/task_queue.h"

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace nasd::util {

using namespace std::chrono_literals;

TEST(TaskQueue, OneThreadRunsTasksInSubmissionOrder) {
  std::vector<int> order;
  {
    TaskQueue q({.threads = 1});
    for (int i = 0; i < 100; ++i) EXPECT_TRUE(q.submit([&order, i] { order.push_back(i); }));
    q.stop();
  }
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

TEST(TaskQueue, ABoundedQueueRefusesWhenFullAndStopRunsWhatIsQueued) {
  std::atomic<bool> release{false};
  std::atomic<int> ran{0};
  TaskQueue q({.threads = 1, .max_queued = 2});
  ASSERT_TRUE(q.submit([&] {
    while (!release) std::this_thread::sleep_for(1ms);
    ++ran;
  }));
  for (int i = 0; i < 200 && q.queued() != 0; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(q.submit([&] { ++ran; }));
  EXPECT_TRUE(q.submit([&] { ++ran; }));
  EXPECT_FALSE(q.submit([&] { ++ran; })) << "a third queued task fits a queue of two";
  release = true;
  q.stop();
  EXPECT_EQ(ran, 3);
  EXPECT_FALSE(q.submit([] {})) << "taken after stop()";
}

TEST(TaskQueue, DropQueuedStopsWithoutRunningWhatHasNotStarted) {
  std::atomic<bool> release{false};
  std::atomic<int> ran{0};
  TaskQueue q({.threads = 1, .at_stop = TaskQueue::AtStop::DropQueued});
  q.submit([&] {
    while (!release) std::this_thread::sleep_for(1ms);
  });
  for (int i = 0; i < 200 && q.queued() != 0; ++i) std::this_thread::sleep_for(1ms);
  for (int i = 0; i < 10; ++i) q.submit([&] { ++ran; });
  std::thread stopper([&] { q.stop(); });
  std::this_thread::sleep_for(20ms);
  release = true;
  stopper.join();
  EXPECT_EQ(ran, 0);
}

TEST(TaskQueue, AThrowingTaskDoesNotEndItsThread) {
  std::atomic<int> ran{0};
  TaskQueue q({.threads = 1, .room = "test"});
  q.submit([] { throw std::runtime_error("boom"); });
  q.submit([&] { ++ran; });
  q.stop();
  EXPECT_EQ(ran, 1);
}

TEST(PeriodicWorker, RunsOnItsIntervalAndSoonerWhenNudged) {
  std::atomic<int> rounds{0};
  PeriodicWorker w("test", 10s, [&] { ++rounds; });
  w.start();
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(rounds, 0) << "ran before its interval without a nudge";
  w.nudge();
  for (int i = 0; i < 500 && rounds == 0; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(rounds, 1);
  w.stop();
  EXPECT_EQ(w.rounds(), 1u);

  std::atomic<int> ticks{0};
  PeriodicWorker fast("test", 5ms, [&] {
    ++ticks;
    if (ticks == 1) throw std::runtime_error("a failed round is contained");
  });
  fast.start();
  for (int i = 0; i < 1000 && ticks < 3; ++i) std::this_thread::sleep_for(1ms);
  fast.stop();
  EXPECT_GE(ticks, 3);
}

}  // namespace nasd::util
