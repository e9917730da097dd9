// The sick disk's faults (sick_faults.h): the control lines it takes and refuses, and what it
// decides for each write.
#include "tests/e2e/sick_faults.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>

namespace nasd::e2e {
namespace {

std::optional<SickCommand> parse(const std::string& line, FaultSettings* s, std::string* error = nullptr) {
  std::string ignored;
  return parse_sick_command(line, s, error ? error : &ignored);
}

TEST(SickFaults, ParsesAWholeSetAndPrintsItBack) {
  FaultSettings s;
  ASSERT_EQ(parse("faults eio=0.25 slow_ms=300 full_after=4096 path=*.lfs seed=7", &s), SickCommand::Faults);
  EXPECT_DOUBLE_EQ(s.eio, 0.25);
  EXPECT_EQ(s.slow_ms, 300);
  EXPECT_EQ(s.full_after, 4096u);
  EXPECT_EQ(s.path, "*.lfs");
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.text(), "faults eio=0.25 slow_ms=300 full_after=4096 path=*.lfs seed=7");
  FaultSettings again;
  ASSERT_EQ(parse(s.text(), &again), SickCommand::Faults);
  EXPECT_EQ(again.text(), s.text());
}

TEST(SickFaults, KeysNotNamedAreOffAndClearEndsEverything) {
  FaultSettings s;
  ASSERT_TRUE(parse("faults eio=1 slow_ms=5", &s));
  ASSERT_TRUE(parse("faults slow_ms=5", &s));
  EXPECT_EQ(s.eio, 0);
  ASSERT_EQ(parse("clear", &s), SickCommand::Faults);
  EXPECT_EQ(s.text(), "faults");
  EXPECT_EQ(parse("status", &s), SickCommand::Status);
}

TEST(SickFaults, BadLinesAreRefusedWithTheReasonAndChangeNothing) {
  FaultSettings s;
  ASSERT_TRUE(parse("faults eio=1", &s));
  for (const char* bad : {"", "reboot", "faults eio=2", "faults eio=nan", "faults eio=1e-3",
                          "faults eio=-0.5", "faults slow_ms=60001", "faults slow_ms=x",
                          "faults full_after=", "faults path=", "faults color=red", "faults eio",
                          "status now", "faults seed=99999999999999999999"}) {
    std::string error;
    EXPECT_FALSE(parse(bad, &s, &error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
    EXPECT_EQ(s.eio, 1.0) << bad;
  }
  std::string error;
  EXPECT_FALSE(parse("faults path=" + std::string(2000, 'a'), &s, &error));
  EXPECT_NE(error.find("1024"), std::string::npos);
}

TEST(SickFaults, EioFailsTheWritesOfMatchingFilesOnly) {
  SickFaults f;
  FaultSettings s;
  ASSERT_TRUE(parse("faults eio=1 path=v0*", &s));
  f.set(s);
  EXPECT_EQ(f.decide("v0.lfs", 0).error, EIO);
  EXPECT_EQ(f.decide("v0.lfs", 0, /*sync=*/true).error, EIO);
  EXPECT_EQ(f.decide("v1.lfs", 4096).error, 0);
  EXPECT_EQ(f.counters().eio, 2u);
  EXPECT_EQ(f.counters().writes, 3u);
}

TEST(SickFaults, AFractionOfWritesFailsTheSameWayForTheSameSeed) {
  auto run = [](const std::string& line) {
    SickFaults f;
    FaultSettings s;
    EXPECT_TRUE(parse(line, &s));
    f.set(s);
    std::string pattern;
    for (int i = 0; i < 1000; ++i) pattern += f.decide("f", 0).error ? 'x' : '.';
    return pattern;
  };
  const std::string a = run("faults eio=0.1 seed=3");
  EXPECT_EQ(a, run("faults eio=0.1 seed=3"));
  EXPECT_NE(a, run("faults eio=0.1 seed=4"));
  const auto failed = std::count(a.begin(), a.end(), 'x');
  EXPECT_GT(failed, 50);
  EXPECT_LT(failed, 150);
}

TEST(SickFaults, TheDiskFillsUpAfterItsBytesAndOverwritesStillWork) {
  SickFaults f;
  FaultSettings s;
  ASSERT_TRUE(parse("faults full_after=10000", &s));
  f.set(s);
  EXPECT_EQ(f.decide("f", 8192).error, 0);
  EXPECT_EQ(f.decide("f", 4096).error, ENOSPC);  // only 1808 bytes left
  EXPECT_EQ(f.decide("f", 0).error, 0);          // in place: no new space
  EXPECT_EQ(f.decide("f", 0, /*sync=*/true).error, 0);
  EXPECT_EQ(f.decide("f", 1808).error, 0);
  EXPECT_EQ(f.decide("f", 1).error, ENOSPC);
  EXPECT_EQ(f.settings().full_after, 0u);
  EXPECT_EQ(f.counters().enospc, 2u);
}

TEST(SickFaults, SlowWritesWaitAndStillHappen) {
  SickFaults f;
  FaultSettings s;
  ASSERT_TRUE(parse("faults slow_ms=250 path=sick/*", &s));
  f.set(s);
  EXPECT_EQ(f.decide("sick/a", 0).slow_ms, 250);
  EXPECT_EQ(f.decide("sick/a", 0).error, 0);
  EXPECT_EQ(f.decide("healthy/a", 0).slow_ms, 0);
  EXPECT_EQ(f.counters().slowed, 2u);
}

}  // namespace
}  // namespace nasd::e2e
