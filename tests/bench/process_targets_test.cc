// --targets: process i uses target i mod T (the SFS2014 reference report's dataflow).
#include "bench/process_targets.h"

#include <gtest/gtest.h>


#include "bench/options.h"

namespace nasd::bench {
namespace {

TEST(ProcessTargetsTest, EachProcessTakesTheNextTargetInTurn) {
  // Four nodes, ten processes: 0,4,8 on node 1; 1,5,9 on node 2; 2,6 on 3; 3,7 on 4.
  for (size_t p = 0; p < 10; ++p) {
    EXPECT_EQ(targets_of_process(p, 4, true), (std::vector<size_t>{p % 4})) << p;
  }
  EXPECT_EQ(processes_on_target(0, 4, 10, true), 3u);
  EXPECT_EQ(processes_on_target(1, 4, 10, true), 3u);
  EXPECT_EQ(processes_on_target(2, 4, 10, true), 2u);
  EXPECT_EQ(processes_on_target(3, 4, 10, true), 2u);
  EXPECT_EQ(processes_on_target(3, 4, 3, true), 0u);  // fewer processes than targets
  size_t sum = 0;
  for (size_t t = 0; t < 7; ++t) sum += processes_on_target(t, 7, 100, true);
  EXPECT_EQ(sum, 100u);
  // Without --targets every process uses every target.
  EXPECT_EQ(targets_of_process(5, 3, false), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(processes_on_target(2, 3, 5, false), 5u);
}

TEST(ProcessTargetsTest, OptionParsesTheListAndRefusesMixing) {
  Options o = parse_options({"--targets",
                             "nfs://10.0.0.1/ifs?nfsport=2049&mountport=20048,nfs://10.0.0.2/ifs,"
                             "filer3:/ifs",
                             "--load", "100", "--processes", "6"});
  ASSERT_EQ(o.config.targets.size(), 3u);
  EXPECT_TRUE(o.config.target_per_process);
  EXPECT_EQ(o.config.targets[0].server, "10.0.0.1");
  EXPECT_EQ(o.config.targets[0].nfs_port, 2049);
  EXPECT_EQ(o.config.targets[2].server, "filer3");
  EXPECT_THROW(parse_options({"--targets", "a:/x,b:/x", "--target", "c:/x", "--load", "1"}),
               UsageError);
  EXPECT_THROW(parse_options({"--target", "c:/x", "--targets", "a:/x,b:/x", "--load", "1"}),
               UsageError);
  EXPECT_THROW(parse_options({"--targets", "a:/x,,b:/x", "--load", "1"}), UsageError);
  EXPECT_THROW(parse_options({"--targets", "a:/x", "--targets", "b:/x", "--load", "1"}), UsageError);
  EXPECT_FALSE(parse_options({"--target", "a:/x", "--load", "1"}).config.target_per_process);
}

}  // namespace
}  // namespace nasd::bench
