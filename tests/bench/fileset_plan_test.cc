#include "bench/fileset_plan.h"

#include <gtest/gtest.h>

#include <map>

namespace nasd::bench {
namespace {

TEST(FilesetPlanTest, ApportionKeepsTheDistributionExactlyForAHundredFiles) {
  std::vector<uint64_t> sizes = apportion_sizes(100, specsfs_file_sizes(), 5);
  ASSERT_EQ(sizes.size(), 100u);
  std::map<uint64_t, int> n;
  for (uint64_t s : sizes) ++n[s];
  for (const FileSizeBucket& b : specsfs_file_sizes()) EXPECT_EQ(n[b.bytes], static_cast<int>(b.percent)) << b.bytes;
}

TEST(FilesetPlanTest, ApportionOfAFewFilesFavoursTheCommonSizes) {
  std::vector<uint64_t> sizes = apportion_sizes(3, specsfs_file_sizes(), 5);
  std::map<uint64_t, int> n;
  for (uint64_t s : sizes) ++n[s];
  EXPECT_EQ(n[1024], 1);
  EXPECT_EQ(n[2048], 1);
  EXPECT_EQ(n[4096], 1);
}

TEST(FilesetPlanTest, SizeScalesWithRequestedLoad) {
  FilesetParams p;
  p.mib_per_op = 1;
  p.peak_ops = 100;
  p.workers = 2;
  p.targets = 2;
  FilesetShape small = plan_fileset(p);
  p.peak_ops = 200;
  FilesetShape large = plan_fileset(p);
  // 100 MiB over 4 (worker, target) pairs at a ~26.7 KiB mean file size.
  double mean = mean_file_size(specsfs_file_sizes());
  EXPECT_NEAR(static_cast<double>(small.file_sizes.size()), 100.0 * 1024 * 1024 / 4 / mean, 1.0);
  EXPECT_NEAR(static_cast<double>(large.file_sizes.size()), 2.0 * small.file_sizes.size(), 1.0);
  EXPECT_NEAR(static_cast<double>(small.bytes()), 100.0 * 1024 * 1024 / 4, 0.05 * 100 * 1024 * 1024 / 4);
}

TEST(FilesetPlanTest, LayoutFollowsFilesPerDirectory) {
  FilesetParams p;
  p.peak_ops = 10;
  p.mib_per_op = 1;  // 10 MiB -> ~384 files
  p.files_per_dir = 30;
  FilesetShape s = plan_fileset(p);
  EXPECT_EQ(s.dirs, (s.file_sizes.size() + 29) / 30);
  EXPECT_EQ(s.symlinks, s.file_sizes.size() / 20);
  EXPECT_EQ(s.spares, s.file_sizes.size() / 10);
}

TEST(FilesetPlanTest, TinyLoadsStillGetAUsableFileset) {
  FilesetParams p;
  p.peak_ops = 1;
  p.mib_per_op = 0;
  FilesetShape s = plan_fileset(p);
  EXPECT_GE(s.file_sizes.size(), 10u);
  EXPECT_GE(s.dirs, 1u);
  EXPECT_GE(s.symlinks, 1u);
  EXPECT_GE(s.spares, 4u);
}

TEST(FilesetPlanTest, MeanOfTheDistribution) {
  // 0.33*1 + 0.21*2 + 0.13*4 + 0.10*8 + 0.08*16 + 0.05*32 + 0.04*64 + 0.03*128 + 0.02*256 + 0.01*1024
  EXPECT_NEAR(mean_file_size(specsfs_file_sizes()), 26.71 * 1024, 1e-6);
}

}  // namespace
}  // namespace nasd::bench

namespace nasd::bench {
namespace {

// The fileset a closed-loop micro-benchmark asks for: one file size, the number of files
// following load × MiB per op, and the listing directory passed through.
TEST(FilesetPlanTest, SingleSizeAndListingDirectory) {
  FilesetParams p;
  p.peak_ops = 1000000;
  p.mib_per_op = 16.0 * 262144 * 2 / (1000000.0 * 1048576);  // 16 files of 256 KiB for each of 2 workers
  p.workers = 2;
  p.file_sizes = {{262144, 100}};
  p.listing_entries = 1000;
  FilesetShape s = plan_fileset(p);
  EXPECT_EQ(s.file_sizes.size(), 16u);
  EXPECT_EQ(s.bytes(), 16u * 262144);
  EXPECT_EQ(s.listing_entries, 1000u);
}

}  // namespace
}  // namespace nasd::bench
