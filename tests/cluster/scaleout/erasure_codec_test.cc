// ISA-L through ErasureCodec: every erasure pattern of up to M units rebuilds exactly.
#include "cluster/scaleout/erasure_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace nasd::scaleout {
namespace {

struct Group {
  std::vector<std::vector<uint8_t>> units;
  std::vector<uint8_t*> ptrs;
};

Group encoded(const ErasureCodec& c, size_t len, std::mt19937_64& rng) {
  Group g;
  g.units.assign(c.data() + c.parity(), std::vector<uint8_t>(len));
  for (int i = 0; i < c.data(); ++i) {
    for (auto& b : g.units[i]) b = static_cast<uint8_t>(rng());
  }
  std::vector<const uint8_t*> d;
  std::vector<uint8_t*> p;
  for (int i = 0; i < c.data(); ++i) d.push_back(g.units[i].data());
  for (int i = 0; i < c.parity(); ++i) p.push_back(g.units[c.data() + i].data());
  c.encode(len, d.data(), p.data());
  for (auto& u : g.units) g.ptrs.push_back(u.data());
  return g;
}

TEST(ErasureCodec, EveryPatternUpToMRebuilds) {
  std::mt19937_64 rng(7);
  const std::pair<int, int> shapes[] = {{6, 2}, {4, 2}, {2, 2}, {16, 2}, {8, 4}, {3, 1}, {1, 2},
                                        {1, 3}, {10, 3}};
  for (auto [n, m] : shapes) {
    ErasureCodec c(n, m);
    const int w = n + m;
    // Every subset of size <= m (exhaustive for these widths).
    for (uint32_t mask = 1; mask < (1u << w); ++mask) {
      if (__builtin_popcount(mask) > m) continue;
      const size_t len = 1 + rng() % 5000;
      Group g = encoded(c, len, rng);
      Group orig = g;
      std::vector<int> missing;
      for (int i = 0; i < w; ++i) {
        if (mask & (1u << i)) {
          missing.push_back(i);
          std::fill(g.units[i].begin(), g.units[i].end(), 0xEE);
        }
      }
      std::string err;
      ASSERT_TRUE(c.reconstruct(len, g.ptrs.data(), missing, &err)) << err;
      for (int i = 0; i < w; ++i) {
        ASSERT_EQ(g.units[i], orig.units[i]) << n << "+" << m << " mask " << mask << " unit " << i;
      }
    }
  }
}

TEST(ErasureCodec, MoreThanMMissingIsRefused) {
  std::mt19937_64 rng(1);
  ErasureCodec c(6, 2);
  Group g = encoded(c, 4096, rng);
  std::string err;
  EXPECT_FALSE(c.reconstruct(4096, g.ptrs.data(), {0, 3, 7}, &err));
  EXPECT_NE(err, "");
  EXPECT_FALSE(c.reconstruct(4096, g.ptrs.data(), {0, 0}, &err));  // duplicates
  EXPECT_FALSE(c.reconstruct(4096, g.ptrs.data(), {8}, &err));     // out of range
}

TEST(ErasureCodec, OneDataUnitParityIsACopy) {
  std::mt19937_64 rng(3);
  ErasureCodec c(1, 2);
  Group g = encoded(c, 1000, rng);
  EXPECT_EQ(g.units[1], g.units[0]);
  EXPECT_EQ(g.units[2], g.units[0]);
}

TEST(ErasureCodec, RandomErasuresOnFullUnits) {
  std::mt19937_64 rng(11);
  ErasureCodec c(6, 2);
  for (int round = 0; round < 20; ++round) {
    Group g = encoded(c, 128 * 1024, rng);
    Group orig = g;
    std::vector<int> all = {0, 1, 2, 3, 4, 5, 6, 7};
    std::shuffle(all.begin(), all.end(), rng);
    std::vector<int> missing(all.begin(), all.begin() + 1 + round % 2);
    for (int i : missing) std::fill(g.units[i].begin(), g.units[i].end(), 0);
    std::string err;
    ASSERT_TRUE(c.reconstruct(128 * 1024, g.ptrs.data(), missing, &err)) << err;
    for (int i = 0; i < 8; ++i) ASSERT_EQ(g.units[i], orig.units[i]);
  }
}

}  // namespace
}  // namespace nasd::scaleout
