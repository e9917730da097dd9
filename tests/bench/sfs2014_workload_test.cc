// The SFS2014 workloads as business-metric loads: every workload exists with a usable mix, the
// metric list parser, the loads that follow the metric, the fileset that grows with it as
// SFS2014's capacity per metric, scaled-down file sizes, and the FSSTAT free-space check.
#include "bench/sfs2014_workload.h"

#include <gtest/gtest.h>

#include "bench/benchmark.h"
#include "bench/fileset_plan.h"
#include "bench/options.h"
#include "bench/step_plan.h"

namespace nasd::bench {
namespace {

TEST(Sfs2014Workload, EveryWorkloadHasAMixRateAndCapacity) {
  ASSERT_EQ(sfs2014_workload_names().size(), 5u);
  for (const std::string& name : sfs2014_workload_names()) {
    const Sfs2014Workload& w = sfs2014_workload(name);
    EXPECT_NEAR(w.mix.total(), 100.0, 0.01) << name;
    EXPECT_GT(w.ops_per_metric, 0) << name;
    EXPECT_GT(w.transfer_bytes, 0u) << name;
    EXPECT_FALSE(w.file_sizes.empty()) << name;
    EXPECT_FALSE(w.provenance.empty()) << name;
    MixSampler sampler(w.mix);  // throws on an empty mix
  }
  EXPECT_THROW(sfs2014_workload("specsfs2008"), MixError);
}

TEST(Sfs2014Workload, ConfirmedCapacitiesPerBusinessMetric) {
  EXPECT_DOUBLE_EQ(sfs2014_workload("vda").capacity_bytes_per_metric, 24e9);
  EXPECT_DOUBLE_EQ(sfs2014_workload("vdi").capacity_bytes_per_metric, 12e9);
  EXPECT_DOUBLE_EQ(sfs2014_workload("database").capacity_bytes_per_metric, 24e9);
  EXPECT_DOUBLE_EQ(sfs2014_workload("swbuild").capacity_bytes_per_metric, 5e9);
  EXPECT_DOUBLE_EQ(sfs2014_workload("eda").capacity_bytes_per_metric, 11.0 * 1024 * 1024 * 1024);
}

TEST(Sfs2014Workload, MixesHaveTheirCharacter) {
  const auto& vda = sfs2014_workload("vda").mix;
  EXPECT_GE(vda.percent(OpType::kRead) + vda.percent(OpType::kWrite), 85);  // streaming
  const auto& sw = sfs2014_workload("swbuild").mix;
  EXPECT_GE(sw.percent(OpType::kGetattr) + sw.percent(OpType::kLookup) + sw.percent(OpType::kAccess), 70);
  const auto& vdi = sfs2014_workload("vdi").mix;
  EXPECT_GT(vdi.percent(OpType::kWrite), vdi.percent(OpType::kRead));  // write-heavy
  const auto& db = sfs2014_workload("database").mix;
  EXPECT_GT(db.percent(OpType::kRead), db.percent(OpType::kWrite));
  EXPECT_EQ(sfs2014_workload("database").transfer_bytes, 8192u);
}

TEST(Sfs2014Workload, BusinessMetricList) {
  EXPECT_EQ(parse_business_metrics("1,2,4,8"), (std::vector<double>{1, 2, 4, 8}));
  EXPECT_THROW(parse_business_metrics("1,1.5"), StepPlanError);
  EXPECT_THROW(parse_business_metrics("2,1"), StepPlanError);
  EXPECT_THROW(parse_business_metrics("0"), StepPlanError);
  EXPECT_THROW(parse_business_metrics(""), StepPlanError);
}

TEST(Sfs2014Workload, LoadsFollowTheMetric) {
  const Sfs2014Workload& vda = sfs2014_workload("vda");
  EXPECT_EQ(business_metric_loads(vda, {1, 2, 4}), (std::vector<double>{10, 20, 40}));
}

TEST(Sfs2014Workload, FilesetGrowsWithTheMetricAsSfs2014Capacity) {
  for (const std::string& name : sfs2014_workload_names()) {
    const Sfs2014Workload& w = sfs2014_workload(name);
    double scale = 1e-4;
    for (double metric : {1.0, 4.0}) {
      FilesetParams p;
      p.peak_ops = metric * w.ops_per_metric;
      p.mib_per_op = fileset_mib_per_op(w, scale);
      p.workers = 2;
      p.file_sizes = w.file_sizes;
      FilesetShape shape = plan_fileset(p);
      double want = metric * w.capacity_bytes_per_metric * scale / 2;  // per worker
      // At least the capacity, and no more than one (scaled) file over it.
      EXPECT_GE(static_cast<double>(shape.bytes()), want * 0.999) << name << " x" << metric;
      EXPECT_LE(static_cast<double>(shape.bytes()), want * 1.25 + 4096 * 10) << name << " x" << metric;
    }
  }
}

TEST(Sfs2014Workload, FileSizesScaleDownWhenTheShareIsSmall) {
  FilesetParams p;
  p.peak_ops = 10;
  p.mib_per_op = 1;  // 10 MiB in all for one worker: 1 GiB files cannot fit ten times
  p.file_sizes = {{1024ull << 20, 100}};
  FilesetShape shape = plan_fileset(p);
  ASSERT_GE(shape.file_sizes.size(), 10u);
  EXPECT_LE(shape.file_sizes[0], 2ull << 20);
  EXPECT_GE(shape.bytes(), 10ull << 20);
}

TEST(Sfs2014Workload, FreeSpaceCheckNamesTheTarget) {
  std::vector<Target> targets = {parse_target("nfs://127.0.0.1/a"), parse_target("nfs://127.0.0.1/b")};
  std::vector<ServerFacts> facts(2);
  facts[0].free_bytes = 1000000;
  facts[1].free_bytes = 100;
  EXPECT_EQ(check_fileset_fits(targets, facts, 50), "");
  std::string why = check_fileset_fits(targets, facts, 1000);
  EXPECT_NE(why.find("nfs://127.0.0.1/b"), std::string::npos) << why;
  EXPECT_NE(why.find("FSSTAT"), std::string::npos) << why;
}

TEST(Sfs2014Workload, OptionsSetTheWholeRun) {
  Options o = parse_options({"--target", "nfs://h/e", "--workload", "swbuild", "--business-metric", "1,3",
                             "--fileset-scale", "0.001"});
  EXPECT_EQ(o.config.workload, "swbuild");
  EXPECT_EQ(o.config.metric_unit, "Builds");
  EXPECT_EQ(o.config.loads, (std::vector<double>{500, 1500}));
  EXPECT_EQ(o.config.io_size, 16384u);
  EXPECT_NEAR(o.config.mib_per_op, 5e9 * 0.001 / 500 / 1048576, 1e-9);
  EXPECT_THROW(parse_options({"--target", "nfs://h/e", "--workload", "vda"}), UsageError);
  EXPECT_THROW(parse_options({"--target", "nfs://h/e", "--workload", "vda", "--business-metric", "1", "--load", "5"}),
               UsageError);
  EXPECT_THROW(parse_options({"--target", "nfs://h/e", "--workload", "vda", "--business-metric", "1", "--mix", "sfs97_r1"}),
               UsageError);
  EXPECT_THROW(parse_options({"--target", "nfs://h/e", "--loads", "5", "--fileset-scale", "1"}), UsageError);
  EXPECT_THROW(parse_options({"--target", "nfs://h/e", "--workload", "nope", "--business-metric", "1"}), UsageError);
}

}  // namespace
}  // namespace nasd::bench

namespace nasd::bench {
namespace {

// MB/s is the payload the successful READ/WRITE replies carried, not ops × transfer size.
TEST(Sfs2014Workload, MbPerSecCountsReplyBytes) {
  RunConfig c;
  c.loads = {10};
  c.step_seconds = 2;
  RunResult r;
  r.steps.resize(1);
  r.steps[0].stats.record_reply(OpType::kRead, 1000, 0, 3000000);
  r.steps[0].stats.record_reply(OpType::kWrite, 1000, 0, 1000000);
  r.steps[0].stats.record_reply(OpType::kRead, 1000, 70, 5000000);  // an error moves nothing
  summarize(c, &r);
  EXPECT_DOUBLE_EQ(r.steps[0].mb_per_sec, 2.0);
}

}  // namespace
}  // namespace nasd::bench
