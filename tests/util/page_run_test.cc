#include "util/page_run.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

namespace nasd::util {
namespace {

TEST(PageRun, IsPageAlignedAndSizedInGranules) {
  PageRunRef run(PageRun::acquire(PageRun::kGranule + 1));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(run.get()->data()) % PageRun::kPageSize, 0u);
  EXPECT_EQ(run.get()->capacity(), 2 * PageRun::kGranule);
  EXPECT_EQ(run.get()->refs(), 1u);
}

TEST(PageRun, HoldsOnlyItsOwnWholePages) {
  PageRunRef ref(PageRun::acquire(PageRun::kGranule));
  const PageRun* run = ref.get();
  const uint8_t* base = run->data();
  EXPECT_TRUE(run->holds_page(base));
  EXPECT_TRUE(run->holds_page(base + run->capacity() - PageRun::kPageSize));
  EXPECT_FALSE(run->holds_page(base + 1)) << "not on a page boundary";
  EXPECT_FALSE(run->holds_page(base + run->capacity())) << "past the end";
  EXPECT_FALSE(run->holds_page(base - PageRun::kPageSize)) << "before the start";
}

// The last reference gives the run back to the pool, and the next acquire of that size gets
// the same (warm) memory instead of faulting fresh pages in.
TEST(PageRun, TheLastReferenceReturnsTheRunForReuse) {
  constexpr size_t kBytes = 5 * PageRun::kGranule;  // a size no other test uses
  PageRun* run = PageRun::acquire(kBytes);
  uint8_t* memory = run->data();
  run->ref();  // as a cache block adopting a page does
  const size_t pooled = PageRun::pooled_bytes();
  run->unref();
  EXPECT_EQ(PageRun::pooled_bytes(), pooled) << "given back while still referenced";
  // Dropped on another thread, as a cache's flusher does.
  std::thread([run] { run->unref(); }).join();
  EXPECT_EQ(PageRun::pooled_bytes(), pooled + run->capacity());

  const uint64_t allocated = PageRun::runs_allocated();
  PageRunRef again(PageRun::acquire(kBytes));
  EXPECT_EQ(again.get()->data(), memory);
  EXPECT_EQ(PageRun::runs_allocated(), allocated);
  EXPECT_EQ(again.get()->refs(), 1u);
}

// A pool full of runs of a size nobody asks for any more still takes back, and hands out
// again, the run of the size in use: the oldest runs make room.
TEST(PageRun, RunsOfAnotherSizeDoNotKeepTheWarmRunOut) {
  std::vector<PageRun*> stale;
  constexpr size_t kStale = 256 * 1024, kInUse = 384 * 1024;  // too far apart to share runs
  while (stale.size() * kStale <= PageRun::kMaxPooledBytes + kStale)
    stale.push_back(PageRun::acquire(kStale));
  for (PageRun* run : stale) run->unref();  // the pool is now full of them
  EXPECT_GE(PageRun::pooled_bytes() + kStale, PageRun::kMaxPooledBytes);

  PageRun* warm = PageRun::acquire(kInUse);
  uint8_t* memory = warm->data();
  warm->unref();
  const uint64_t allocated = PageRun::runs_allocated();
  for (int i = 0; i < 10; i++) {
    PageRun* again = PageRun::acquire(kInUse);
    EXPECT_EQ(again->data(), memory) << "round " << i;
    again->unref();
  }
  EXPECT_EQ(PageRun::runs_allocated(), allocated);
  EXPECT_LE(PageRun::pooled_bytes(), PageRun::kMaxPooledBytes);
}

// Runs that keep only one adopted page each: past the adopted bytes plus the overhead and slack,
// adoption stops, and it resumes once whole runs are freed.
TEST(PageRun, AdoptionStopsWhileRunsHoldFarMoreThanTheirAdoptedPages) {
  ASSERT_EQ(PageRun::adopted_pages(), 0u);
  ASSERT_TRUE(PageRun::may_adopt());
  std::vector<PageRun*> runs;
  while (PageRun::may_adopt() && runs.size() < 1000) {
    PageRun* run = PageRun::acquire(1u << 20);
    run->ref_adopted();  // one page of it cached
    run->unref();        // the record is gone
    runs.push_back(run);
  }
  size_t bytes = 0;
  for (PageRun* run : runs) bytes += run->capacity();
  EXPECT_EQ(PageRun::adopted_pages(), runs.size());
  EXPECT_EQ(PageRun::adopting_bytes(), bytes);
  // Stopped at the first run past the bound, not before.
  const size_t before_last = bytes - runs.back()->capacity();
  auto bound = [](size_t pages) {
    const size_t adopted = pages * PageRun::kPageSize;
    return adopted + adopted / 100 * PageRun::kAdoptionOverheadPercent + PageRun::kAdoptionSlack;
  };
  EXPECT_LE(before_last, bound(runs.size() - 1));
  EXPECT_GT(bytes, bound(runs.size()));
  // Evictions free whole runs: adoption comes back.
  for (PageRun* run : runs) run->unref_adopted();
  EXPECT_TRUE(PageRun::may_adopt());
  EXPECT_EQ(PageRun::adopted_pages(), 0u);
  EXPECT_EQ(PageRun::adopting_bytes(), 0u);
}

TEST(LentPageRun, LendsToThisThreadOnlyAndNests) {
  PageRunRef outer(PageRun::acquire(1)), inner(PageRun::acquire(1));
  EXPECT_EQ(LentPageRun::current(), nullptr);
  {
    LentPageRun a(outer.get());
    EXPECT_EQ(LentPageRun::current(), outer.get());
    PageRun* seen_elsewhere = outer.get();
    std::thread([&] { seen_elsewhere = LentPageRun::current(); }).join();
    EXPECT_EQ(seen_elsewhere, nullptr);
    {
      LentPageRun b(inner.get());
      EXPECT_EQ(LentPageRun::current(), inner.get());
      LentPageRun none(nullptr);
      EXPECT_EQ(LentPageRun::current(), nullptr);
    }
    EXPECT_EQ(LentPageRun::current(), outer.get());
  }
  EXPECT_EQ(LentPageRun::current(), nullptr);
}

}  // namespace
}  // namespace nasd::util
