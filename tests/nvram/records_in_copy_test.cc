// RecordsInCopy: the journal's complete prefix ends at the first record still being copied,
// whatever order the copies finish in.
#include "nvram/records_in_copy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

namespace nasd::nvram {
namespace {

TEST(RecordsInCopy, TheFirstUncopiedRecordBoundsThePrefix) {
  RecordsInCopy r;
  EXPECT_FALSE(r.first());
  r.add(100);
  r.add(200);
  r.add(300);
  EXPECT_EQ(r.first(), 100u);
  EXPECT_FALSE(r.copied(200));  // not the first: the prefix still ends at 100
  EXPECT_EQ(r.first(), 100u);
  EXPECT_TRUE(r.copied(100));   // 100 and the copied 200 leave together
  EXPECT_EQ(r.first(), 300u);
  EXPECT_TRUE(r.copied(300));
  EXPECT_TRUE(r.empty());
  EXPECT_FALSE(r.first());
}

// Against the std::set it replaced, over many random interleavings of reservations and copies.
TEST(RecordsInCopy, AgreesWithAnOrderedSetInAnyOrderOfCopies) {
  std::mt19937_64 rng(12);
  RecordsInCopy r;
  std::set<uint64_t> model;
  std::vector<uint64_t> pending;
  uint64_t next = 0;
  for (int step = 0; step < 20000; ++step) {
    if (pending.empty() || rng() % 3 != 0) {
      next += 1 + rng() % 5000;
      r.add(next);
      model.insert(next);
      pending.push_back(next);
    } else {
      const size_t i = rng() % pending.size();
      const uint64_t pos = pending[i];
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
      const bool was_first = *model.begin() == pos;
      model.erase(pos);
      ASSERT_EQ(r.copied(pos), was_first) << "step " << step;
    }
    ASSERT_EQ(r.first().value_or(~0ull), model.empty() ? ~0ull : *model.begin());
  }
}

}  // namespace
}  // namespace nasd::nvram
