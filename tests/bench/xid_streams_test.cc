#include "bench/xid_streams.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace nasd::bench {
namespace {

// The load threads open their sessions in lockstep; libnfs's own xid start could give two of
// them the same stream (xid_streams.h). Here every thread takes starts at once, as often as
// the xid space has room for, and no two starts may be closer than a stream's length.
TEST(XidStreams, ThreadsTakingStreamsAtOnceNeverShareOne) {
  constexpr uint32_t kSeed = 0xfff00123;  // wraps past 2^32 on the way
  constexpr size_t kThreads = 8;
  constexpr size_t kEach = (uint64_t{1} << 32) / XidStreams::kStride / kThreads;
  XidStreams streams(kSeed);
  std::vector<std::vector<uint32_t>> taken(kThreads);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < kEach; ++i) taken[t].push_back(streams.next_start());
    });
  }
  for (auto& th : threads) th.join();
  std::vector<uint32_t> offsets;  // from the seed, so the wrap does not matter
  for (const auto& mine : taken)
    for (uint32_t start : mine) offsets.push_back(start - kSeed);
  std::sort(offsets.begin(), offsets.end());
  ASSERT_EQ(offsets.size(), kThreads * kEach);
  for (size_t i = 0; i < offsets.size(); ++i)
    ASSERT_EQ(offsets[i], i * XidStreams::kStride) << "streams shared or overlapping at " << i;
}

TEST(XidStreams, TheProcessStreamsAreOneSequence) {
  const uint32_t a = XidStreams::process().next_start();
  const uint32_t b = XidStreams::process().next_start();
  EXPECT_EQ(static_cast<uint32_t>(b - a), XidStreams::kStride);
}

}  // namespace
}  // namespace nasd::bench
