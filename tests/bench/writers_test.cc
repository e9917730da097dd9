#include <gtest/gtest.h>

#include <sstream>

#include "bench/csv_writer.h"
#include "bench/plot.h"
#include "bench/progress_line.h"
#include "bench/report_writer.h"

namespace nasd::bench {
namespace {

// Two steps: the first meets its 100 ops/s, the second gets 150 of 200 requested.
RunResult two_step_result(RunConfig* config) {
  config->loads = {100, 200};
  config->step_seconds = 10;
  config->targets = {parse_target("nfs://127.0.0.1/r/v0?nfsport=2049&mountport=20048")};
  RunResult r;
  r.steps.resize(2);
  for (int i = 0; i < 1000; ++i) r.steps[0].stats.record_reply(OpType::kGetattr, 500000, 0);
  for (int i = 0; i < 1500; ++i) r.steps[1].stats.record_reply(OpType::kRead, 2000000, 0);
  for (int i = 0; i < 3; ++i) r.steps[1].stats.record_reply(OpType::kRemove, 1000000, 2);
  summarize(*config, &r);
  return r;
}

TEST(CsvWriterTest, OneRowPerStep) {
  RunConfig c;
  RunResult r = two_step_result(&c);
  std::ostringstream out;
  write_csv(out, r);
  EXPECT_EQ(out.str(),
            "step,requested_ops,achieved_ops,mean_ms,p50_ms,p99_ms,ok,errors,late_issues,missed,errors_by_op,business_metric,mb_per_sec,server_cpu_s,server_cpu_us_per_op,disk_written_mb_per_sec\n"
            "1,100.0,100.0,0.500,0.500,0.500,1000,0,0,0,,0,0.000,,,\n"
            "2,200.0,150.0,2.000,2.000,2.000,1500,3,0,1,REMOVE=3,0,0.000,,,\n");
}

TEST(CsvWriterTest, ServerCpuPerOperationWhenMeasured) {
  RunConfig c;
  RunResult r = two_step_result(&c);
  r.steps[0].server_cpu_seconds = 0.05;  // 50 ms over 1000 replies: 50 usec each
  std::ostringstream out;
  write_csv(out, r);
  EXPECT_NE(out.str().find("\n1,100.0,100.0,0.500,0.500,0.500,1000,0,0,0,,0,0.000,0.050,50.00,\n"), std::string::npos)
      << out.str();
  std::ostringstream report;
  write_report(report, c, r, ReportLabels{});
  EXPECT_NE(report.str().find("Server CPU"), std::string::npos);
  EXPECT_NE(report.str().find("50.0"), std::string::npos);
}

TEST(CsvWriterTest, DiskWrittenWhenWatched) {
  RunConfig c;
  RunResult r = two_step_result(&c);
  r.steps[1].disk_written_mb_per_sec = 987.65;
  std::ostringstream out;
  write_csv(out, r);
  EXPECT_NE(out.str().find("\n1,100.0,100.0,0.500,0.500,0.500,1000,0,0,0,,0,0.000,,,\n"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find(",REMOVE=3,0,0.000,,,987.6\n"), std::string::npos) << out.str();
  std::ostringstream report;
  write_report(report, c, r, ReportLabels{});
  EXPECT_NE(report.str().find("Disk written"), std::string::npos);
  EXPECT_NE(report.str().find("987.6"), std::string::npos);
}

TEST(ReportWriterTest, HeadlineTableMissedAndErrors) {
  RunConfig c;
  RunResult r = two_step_result(&c);
  std::ostringstream out;
  write_report(out, c, r, ReportLabels{"nasd test rig", "a note"});
  std::string s = out.str();
  // (100*0.5/2 + 50*(0.5+2)/2) / 150 = (25 + 62.5) / 150 = 0.583
  EXPECT_NE(s.find("= 150 Ops/Sec (Overall Response Time = 0.58 msec)"), std::string::npos) << s;
  EXPECT_NE(s.find("nasd test rig"), std::string::npos);
  EXPECT_NE(s.find("Throughput"), std::string::npos);
  // Only the second step is flagged.
  EXPECT_EQ(s.find("MISSED"), s.rfind("MISSED"));
  size_t row2 = s.find("          150");
  ASSERT_NE(row2, std::string::npos) << s;
  EXPECT_NE(s.substr(row2, 80).find("MISSED"), std::string::npos);
  EXPECT_NE(s.find("REMOVE      3 (NFS3ERR_NOENT 3)"), std::string::npos) << s;
  EXPECT_NE(s.find("nfs://127.0.0.1/r/v0?nfsport=2049&mountport=20048"), std::string::npos);
  EXPECT_NE(s.find("a note"), std::string::npos);
}

TEST(PlotTest, ScriptPlotsAchievedAgainstMeanForEachCsv) {
  std::string g = gnuplot_script({"/tmp/a/ganesha.csv", "nasd.csv"}, "out.svg");
  EXPECT_NE(g.find("set terminal svg"), std::string::npos);
  EXPECT_NE(g.find("'/tmp/a/ganesha.csv' every ::1 using 3:4"), std::string::npos) << g;
  EXPECT_NE(g.find("title 'nasd'"), std::string::npos) << g;
  EXPECT_THROW(gnuplot_script({"a.csv"}, "out.jpg"), std::invalid_argument);
  EXPECT_THROW(gnuplot_script({}, "out.png"), std::invalid_argument);
}

TEST(ProgressLineTest, SaysStepRateLatencyAndErrors) {
  Progress p;
  p.step = 3;
  p.steps = 10;
  p.requested_ops = 300;
  p.elapsed_s = 12;
  p.total_s = 350;
  p.achieved_ops = 298.44;
  p.mean_ms = 0.523;
  p.errors = 2;
  EXPECT_EQ(format_progress(p),
            "step 3/10 300 ops/s requested  12.0/350.0 s  achieved 298.4 ops/s  mean 0.52 ms  errors 2");
}

}  // namespace
}  // namespace nasd::bench
