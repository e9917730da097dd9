#include "bench/options.h"

#include <gtest/gtest.h>

#include <fstream>

namespace nasd::bench {
namespace {

const std::string kTarget = "nfs://127.0.0.1/x?nfsport=1&mountport=2";

TEST(OptionsTest, LoadAndStepsMakeEvenSteps) {
  Options o = parse_options({"--target", kTarget, "--load", "1000", "--steps", "4", "--quiet"});
  EXPECT_EQ(o.config.loads, (std::vector<double>{250, 500, 750, 1000}));
  EXPECT_TRUE(o.quiet);
  EXPECT_EQ(o.config.mix.name(), OpMix::specsfs2008().name());
  EXPECT_EQ(o.config.workdir.rfind("loadgen-", 0), 0u);
}

TEST(OptionsTest, ExplicitLoadsMixAndInlineValues) {
  Options o = parse_options({"--target=" + kTarget, "--target", "filer:/b", "--loads=10,20", "--mix", "sfs97_r1",
                             "--processes", "3", "--step-seconds", "1.5", "--workdir", "w"});
  EXPECT_EQ(o.config.targets.size(), 2u);
  EXPECT_EQ(o.config.loads, (std::vector<double>{10, 20}));
  EXPECT_DOUBLE_EQ(o.config.mix.percent(OpType::kCommit), 5);
  EXPECT_EQ(o.config.processes, 3u);
  EXPECT_DOUBLE_EQ(o.config.step_seconds, 1.5);
  EXPECT_EQ(o.config.workdir, "w");
}

TEST(OptionsTest, MixFile) {
  std::string path = ::testing::TempDir() + "/options_test.mix";
  std::ofstream(path) << "READ 100\n";
  Options o = parse_options({"--target", kTarget, "--load", "5", "--mix-file", path});
  EXPECT_DOUBLE_EQ(o.config.mix.percent(OpType::kRead), 100);
}

TEST(OptionsTest, MicroBenchmarkShapes) {
  Options o = parse_options({"--target", kTarget, "--loads", "1000000", "--max-inflight", "1", "--file-size", "262144",
                             "--access", "sequential", "--write-stability", "unstable", "--listing-entries", "1000",
                             "--server-pid", "4242", "--create-when-nothing-to-remove", "--settle-seconds", "30"});
  EXPECT_DOUBLE_EQ(o.config.settle_seconds, 30);
  ASSERT_EQ(o.config.file_sizes.size(), 1u);
  EXPECT_EQ(o.config.file_sizes[0].bytes, 262144u);
  EXPECT_TRUE(o.config.sequential);
  EXPECT_EQ(o.config.write_stability, RunConfig::WriteStability::kUnstable);
  EXPECT_EQ(o.config.listing_entries, 1000u);
  EXPECT_EQ(o.config.server_pid, 4242);
  EXPECT_TRUE(o.config.create_when_nothing_to_remove);
  Options d = parse_options({"--target", kTarget, "--load", "5"});
  EXPECT_FALSE(d.config.sequential);
  EXPECT_EQ(d.config.write_stability, RunConfig::WriteStability::kAuto);
  EXPECT_EQ(d.config.server_pid, 0);
  EXPECT_EQ(parse_options({"--target", kTarget, "--load", "5", "--write-stability", "file_sync"}).config.write_stability,
            RunConfig::WriteStability::kFileSync);
  for (const auto& bad : std::vector<std::vector<std::string>>{
           {"--access", "diagonal"}, {"--write-stability", "data_sync"}, {"--file-size", "0"},
           {"--listing-entries", "0"}, {"--server-pid", "-3"}}) {
    std::vector<std::string> args = {"--target", kTarget, "--load", "5"};
    args.insert(args.end(), bad.begin(), bad.end());
    EXPECT_THROW(parse_options(args), UsageError) << bad[0] << " " << bad[1];
  }
}

TEST(OptionsTest, BadCommandLines) {
  std::vector<std::vector<std::string>> bad = {
      {"--load", "100"},                                              // no target
      {"--target", kTarget},                                          // no load
      {"--target", kTarget, "--loads", "1,2", "--load", "3"},         // both load forms
      {"--target", kTarget, "--load", "0"},                           // not positive
      {"--target", kTarget, "--load", "10", "--steps", "2.5"},        // not whole
      {"--target", kTarget, "--load", "10", "--processes", "0"},      // out of range
      {"--target", kTarget, "--load", "10", "--mix", "nope"},         // unknown mix
      {"--target", kTarget, "--load", "10", "--mix-file", "/nonexistent/mix"},
      {"--target", kTarget, "--load", "10", "--workdir", "a/b"},      // not one component
      {"--target", "nfs://h/e?bogus=1", "--load", "10"},              // bad target
      {"--target", kTarget, "--load"},                                // missing value
      {"--target", kTarget, "--load", "10", "--frobnicate"},          // unknown option
      {"--target", kTarget, "--load", "10", "--plot", "x.png"},       // plot without csv
  };
  for (const auto& args : bad) {
    EXPECT_THROW(parse_options(args), UsageError) << ::testing::PrintToString(args);
  }
}

TEST(OptionsTest, HelpNeedsNothingElse) { EXPECT_TRUE(parse_options({"--help"}).help); }

}  // namespace
}  // namespace nasd::bench
