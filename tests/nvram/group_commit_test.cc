// Group commit: concurrent committers share flushes.
#include <gtest/gtest.h>

#include <array>
#include <barrier>
#include <thread>

#include "nvram/journal.h"
#include "tests/nvram/test_util.h"

namespace nasd::nvram {
namespace {

void append_and_commit(Journal& j, uint64_t seq, std::barrier<>* between) {
  auto payload = testing::pattern(seq, 4096);
  std::array<std::span<const uint8_t>, 1> parts{std::span<const uint8_t>(payload)};
  uint64_t ticket = 0;
  ASSERT_EQ(j.append(0, seq, RecordType::Call, parts, &ticket), fs::Status::Ok);
  if (between) between->arrive_and_wait();
  ASSERT_EQ(j.wait_committed(ticket), fs::Status::Ok);
}

TEST(GroupCommit, WaitersWhoseRecordsAreInShareOneFlush) {
  testing::ScratchDir dir;
  auto j = Journal::open(testing::small_options(dir.file("nv"), 4 << 20, DurabilityMode::Host));
  constexpr int kThreads = 16;
  std::barrier<> all_appended(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] { append_and_commit(*j, i + 1, &all_appended); });
  for (auto& t : threads) t.join();
  JournalStats s = j->stats();
  EXPECT_EQ(s.records_committed, uint64_t(kThreads));
  EXPECT_LT(s.commits, uint64_t(kThreads));
  EXPECT_GT(s.max_group, 1u);
}

TEST(GroupCommit, FreeRunningCommittersNeedFewerFlushesThanRecords) {
  testing::ScratchDir dir;
  auto j = Journal::open(testing::small_options(dir.file("nv"), 16 << 20, DurabilityMode::Host));
  constexpr int kThreads = 8, kEach = 50;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      for (int k = 0; k < kEach; ++k) append_and_commit(*j, uint64_t(i) * kEach + k + 1, nullptr);
    });
  for (auto& t : threads) t.join();
  JournalStats s = j->stats();
  EXPECT_EQ(s.records_committed, uint64_t(kThreads * kEach));
  EXPECT_LT(s.commits, uint64_t(kThreads * kEach));
  EXPECT_NE(j->status().find("avg group"), std::string::npos);
}

TEST(GroupCommit, CommittedRecordsAreInTheRegionAfterReopen) {
  testing::ScratchDir dir;
  auto opts = testing::small_options(dir.file("nv"), 4 << 20, DurabilityMode::Host);
  {
    auto j = Journal::open(opts);
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i) threads.emplace_back([&, i] { append_and_commit(*j, i + 1, nullptr); });
    for (auto& t : threads) t.join();
  }
  auto j = Journal::open(opts);
  auto recs = j->recovered(0);
  ASSERT_EQ(recs.size(), 8u);
  for (size_t i = 0; i < recs.size(); ++i) EXPECT_EQ(recs[i].seq, i + 1);
}

}  // namespace
}  // namespace nasd::nvram
