// Back-pressure: with a tiny region, writers wait for write-behind to free space, and every
// one of them completes with nothing lost.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "fs/call_deadline.h"
#include "nvram/journal_volume.h"
#include "tests/support/memory_fs.h"
#include "tests/nvram/test_util.h"

namespace nasd::nvram {
namespace {

using fs::Status;

TEST(BackPressure, WritersBlockThenAllCompleteNothingLost) {
  testing::ScratchDir dir;
  auto opts = testing::small_options(dir.file("nv"), kRegionHeaderSize + (64 << 10));
  opts.flush_threshold_pct = 50;
  auto target = std::make_shared<test_support::MemoryFs>(1, testing::mem_target_options());
  target->set_flush_delay(std::chrono::milliseconds(5));  // a slow disk
  auto journal = Journal::open(opts);
  auto volume = std::make_unique<JournalVolume>(journal, target);
  volume->recover();

  constexpr int kThreads = 8, kBlocks = 40;
  std::vector<fs::InodeId> files(kThreads);
  fs::OpContext ctx;
  for (int t = 0; t < kThreads; ++t) {
    std::optional<fs::Attr> a;
    fs::Wcc w;
    ASSERT_EQ(volume->create(ctx, volume->root(), "f" + std::to_string(t), fs::CreateMode::Guarded,
                             {}, 0, &files[t], &a, &w),
              Status::Ok);
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBlocks; ++b) {
        fs::Stability c;
        fs::Wcc w;
        auto data = testing::pattern(t * 1000 + b, 4096);
        if (volume->write(ctx, files[t], uint64_t(b) * 4096, data, fs::Stability::FileSync, &c,
                          &w) != Status::Ok)
          failures++;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);

  JournalStats s = journal->stats();
  EXPECT_GT(s.space_waits, 0u) << "320 KiB through a 64 KiB log must have waited";
  EXPECT_EQ(s.space_timeouts, 0u);
  EXPECT_GT(s.fs_flushes, 0u);
  EXPECT_GT(s.records_trimmed, 0u);

  auto verify = [&](fs::Volume& v) {
    for (int t = 0; t < kThreads; ++t)
      for (int b = 0; b < kBlocks; ++b) {
        std::vector<uint8_t> got;
        bool eof;
        std::optional<fs::Attr> a;
        ASSERT_EQ(v.read(ctx, files[t], uint64_t(b) * 4096, 4096, &got, &eof, &a), Status::Ok);
        ASSERT_EQ(got, testing::pattern(t * 1000 + b, 4096)) << "file " << t << " block " << b;
      }
  };
  verify(*volume);
  // And after losing whatever the fs had not flushed yet.
  volume.reset();
  journal.reset();
  target->crash();
  journal = Journal::open(opts);
  volume = std::make_unique<JournalVolume>(journal, target);
  volume->recover();
  verify(*volume);
}

// When write-behind cannot free space in time, the volume makes the operation durable in the
// fs itself (write-through) rather than failing or dropping it.
TEST(BackPressure, LogThatStaysFullFallsBackToWritingThrough) {
  testing::ScratchDir dir;
  auto opts = testing::small_options(dir.file("nv"), kRegionHeaderSize + (32 << 10));
  opts.space_wait = std::chrono::milliseconds(20);
  auto target = std::make_shared<test_support::MemoryFs>(1, testing::mem_target_options());
  target->set_flush_delay(std::chrono::milliseconds(200));  // far slower than space_wait
  auto journal = Journal::open(opts);
  auto volume = std::make_unique<JournalVolume>(journal, target);
  volume->recover();
  fs::OpContext ctx;
  fs::InodeId f;
  std::optional<fs::Attr> a;
  fs::Wcc w;
  ASSERT_EQ(volume->create(ctx, volume->root(), "f", fs::CreateMode::Guarded, {}, 0, &f, &a, &w),
            Status::Ok);
  for (int b = 0; b < 16; ++b) {
    fs::Stability c;
    ASSERT_EQ(volume->write(ctx, f, uint64_t(b) * 4096, testing::pattern(b, 4096),
                            fs::Stability::FileSync, &c, &w),
              Status::Ok);
    EXPECT_EQ(c, fs::Stability::FileSync);
  }
  EXPECT_GT(journal->stats().space_timeouts, 0u);
  volume.reset();
  journal.reset();
  target->crash();
  journal = Journal::open(opts);
  volume = std::make_unique<JournalVolume>(journal, target);
  volume->recover();
  for (int b = 0; b < 16; ++b) {
    std::vector<uint8_t> got;
    bool eof;
    std::optional<fs::Attr> ra;
    ASSERT_EQ(volume->read(ctx, f, uint64_t(b) * 4096, 4096, &got, &eof, &ra), Status::Ok);
    EXPECT_EQ(got, testing::pattern(b, 4096)) << "block " << b;
  }
}

// A call with a deadline (a forwarded one: fs/call_deadline.h) never waits past it, neither
// for the volume (held by a writer that waits for space) nor for space, and is refused JUKEBOX
// with nothing changed; a call without one still waits and completes.
TEST(BackPressure, CallWithADeadlineIsRefusedUnrunWhileTheLogStaysFull) {
  using namespace std::chrono_literals;
  testing::ScratchDir dir;
  auto opts = testing::small_options(dir.file("nv"), kRegionHeaderSize + (64 << 10));
  opts.space_wait = 10s;
  auto target = std::make_shared<test_support::MemoryFs>(1, testing::mem_target_options());
  auto journal = Journal::open(opts);
  auto volume = std::make_unique<JournalVolume>(journal, target);
  volume->recover();
  fs::OpContext ctx;
  fs::InodeId fill, f;
  std::optional<fs::Attr> a;
  fs::Wcc w;
  ASSERT_EQ(volume->create(ctx, volume->root(), "fill", fs::CreateMode::Guarded, {}, 0, &fill,
                           &a, &w),
            Status::Ok);
  ASSERT_EQ(volume->create(ctx, volume->root(), "f", fs::CreateMode::Guarded, {}, 0, &f, &a, &w),
            Status::Ok);
  target->set_flush_delay(3s);  // the log stays full for seconds once filled
  std::thread filling([&] {
    fs::Wcc fw;
    fs::Stability c;
    for (int b = 0; b < 24; ++b)
      EXPECT_EQ(volume->write(ctx, fill, uint64_t(b) * 4096, testing::pattern(b, 4096),
                              fs::Stability::Unstable, &c, &fw),
                Status::Ok);
  });
  for (int i = 0; i < 500 && journal->stats().space_waits == 0; ++i)
    std::this_thread::sleep_for(10ms);
  ASSERT_GT(journal->stats().space_waits, 0u) << "the log never filled";

  const auto start = std::chrono::steady_clock::now();
  {
    fs::CallDeadlineScope bounded(start + 200ms);
    fs::Stability c;
    EXPECT_EQ(volume->write(ctx, f, 0, testing::pattern(99, 4096), fs::Stability::FileSync, &c,
                            &w),
              Status::Jukebox);
    fs::SetAttr grow;
    grow.size = 8192;
    EXPECT_EQ(volume->setattr(ctx, f, grow, std::nullopt, &w), Status::Jukebox);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  fs::Attr attr;
  ASSERT_EQ(volume->getattr(ctx, f, &attr), Status::Ok);
  EXPECT_EQ(attr.size, 0u) << "a refused call ran";
  filling.join();
  // No deadline: waits for space as before.
  fs::Stability c;
  EXPECT_EQ(volume->write(ctx, f, 0, testing::pattern(99, 4096), fs::Stability::FileSync, &c, &w),
            Status::Ok);
}

}  // namespace
}  // namespace nasd::nvram
