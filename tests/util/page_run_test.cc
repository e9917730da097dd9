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

// Runs that keep only one adopted page each: past twice the adopted bytes plus the slack,
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
  const size_t limit_runs = PageRun::kAdoptionSlack / ((1u << 20) - 2 * PageRun::kPageSize);
  EXPECT_EQ(runs.size(), limit_runs + 1);
  EXPECT_EQ(PageRun::adopted_pages(), runs.size());
  EXPECT_EQ(PageRun::adopting_bytes(), runs.size() << 20);
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
