#include "bench/mix.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <ostream>

namespace nasd::bench {
namespace {

// Draw many times and check every procedure's share against its expected probability, with a
// tolerance of 5 standard deviations of a binomial count (a false failure is ~1 in 10^6 runs).
void expect_proportions(const OpMix& mix, uint64_t seed) {
  constexpr int kDraws = 200000;
  MixSampler sampler(mix);
  std::mt19937_64 rng(seed);
  std::array<int, kOpTypeCount> counts{};
  for (int i = 0; i < kDraws; ++i) ++counts[index_of(sampler.draw(rng))];
  for (OpType op : kAllOpTypes) {
    double p = mix.percent(op) / mix.total();
    double expected = p * kDraws;
    double sigma = std::sqrt(kDraws * p * (1 - p));
    if (p == 0) {
      EXPECT_EQ(counts[index_of(op)], 0) << op_name(op) << " has no share but was drawn";
    } else {
      EXPECT_NEAR(counts[index_of(op)], expected, 5 * sigma + 1) << op_name(op);
    }
  }
}

TEST(MixTest, Specsfs2008MatchesThePublishedMix) {
  OpMix m = OpMix::specsfs2008();
  EXPECT_DOUBLE_EQ(m.total(), 100);
  EXPECT_DOUBLE_EQ(m.percent(OpType::kGetattr), 26);
  EXPECT_DOUBLE_EQ(m.percent(OpType::kLookup), 24);
  EXPECT_DOUBLE_EQ(m.percent(OpType::kRead), 18);
  EXPECT_DOUBLE_EQ(m.percent(OpType::kAccess), 11);
  EXPECT_DOUBLE_EQ(m.percent(OpType::kCommit), 0);
}

TEST(MixTest, SamplerFollowsSpecsfs2008) { expect_proportions(OpMix::specsfs2008(), 42); }

TEST(MixTest, SamplerNormalisesSfs97WhosePublishedTableAddsTo99) {
  OpMix m = OpMix::sfs97_r1();
  EXPECT_DOUBLE_EQ(m.total(), 99);
  expect_proportions(m, 7);
}

TEST(MixTest, SamplerFollowsASkewedCustomMix) {
  expect_proportions(OpMix::parse("READ 99.5\nWRITE 0.5\n"), 3);
}

TEST(MixTest, ParsesCommentsBlankLinesPercentSignsAndAnyCase) {
  OpMix m = OpMix::parse("# my mix\n\n  getattr 50%  # half\nLookup 30\nREADDIRPLUS\t20\n", "m.txt");
  EXPECT_DOUBLE_EQ(m.percent(OpType::kGetattr), 50);
  EXPECT_DOUBLE_EQ(m.percent(OpType::kLookup), 30);
  EXPECT_DOUBLE_EQ(m.percent(OpType::kReaddirplus), 20);
  EXPECT_DOUBLE_EQ(m.percent(OpType::kRead), 0);
  EXPECT_NE(m.name().find("m.txt"), std::string::npos);
}

struct BadMix {
  const char* text;
  const char* message_part;
};

// Named by what its error must say: gtest would print the two pointers, and ctest's names of
// these tests would change with every start of the binary (address randomisation).
void PrintTo(const BadMix& m, std::ostream* os) { *os << '"' << m.message_part << '"'; }

class BadMixTest : public ::testing::TestWithParam<BadMix> {};

TEST_P(BadMixTest, IsRejectedWithAReason) {
  try {
    OpMix::parse(GetParam().text, "bad.mix");
    FAIL() << "accepted: " << GetParam().text;
  } catch (const MixError& e) {
    EXPECT_NE(std::string(e.what()).find(GetParam().message_part), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.mix"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Files, BadMixTest,
    ::testing::Values(BadMix{"GETATTR 50\nMKNOD 50\n", "unknown NFSv3 procedure 'MKNOD'"},
                      BadMix{"GETATTR 50\ngetattr 50\n", "listed twice"},
                      BadMix{"GETATTR 110\nREAD -10\n", "outside 0..100"},
                      BadMix{"GETATTR fifty\n", "not a number"},
                      BadMix{"GETATTR 50\nREAD 40\n", "add up to 90"},
                      BadMix{"GETATTR\n", "expected `op percent`"},
                      BadMix{"GETATTR 50 60\nREAD 50\n", "unexpected text"},
                      BadMix{"", "add up to 0"},
                      BadMix{"READ 1e999\n", "not a number"}));

TEST(MixTest, ErrorNamesTheLine) {
  try {
    OpMix::parse("GETATTR 50\n\nBOGUS 50\n", "x");
    FAIL();
  } catch (const MixError& e) {
    EXPECT_NE(std::string(e.what()).find("x:3:"), std::string::npos) << e.what();
  }
}

TEST(MixTest, LoadsAFileAndReportsAMissingOne) {
  std::string path = ::testing::TempDir() + "/mix_test.mix";
  std::ofstream(path) << "READ 60\nWRITE 40\n";
  EXPECT_DOUBLE_EQ(OpMix::load(path).percent(OpType::kWrite), 40);
  std::remove(path.c_str());
  EXPECT_THROW(OpMix::load(path), MixError);
}

TEST(MixTest, ShippedExampleMixParses) {
  OpMix m = OpMix::load(std::string(NASD_BENCH_MIX_DIR) + "/metadata_heavy.mix");
  EXPECT_DOUBLE_EQ(m.percent(OpType::kGetattr), 45);
}

TEST(MixTest, BuiltinByName) {
  EXPECT_DOUBLE_EQ(OpMix::builtin("sfs97_r1").percent(OpType::kCommit), 5);
  EXPECT_THROW(OpMix::builtin("sfs2014"), MixError);
}

TEST(MixTest, DescribeListsLargestShareFirst) {
  EXPECT_EQ(OpMix::parse("WRITE 25\nREAD 75\n").describe(), "READ 75%, WRITE 25%");
}

}  // namespace
}  // namespace nasd::bench
