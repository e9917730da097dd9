#include "bench/process_cpu.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <time.h>

#include <chrono>

namespace nasd::bench {
namespace {

TEST(ProcessCpuTest, ParsesUserPlusSystemTicksPastACommandWithSpaces) {
  // Fields 14 (utime) = 250 and 15 (stime) = 50 ticks at 100 per second: 3 s.
  std::string stat = "4242 (ganesha) nfsd) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 77 0 0";
  auto s = parse_proc_stat_cpu_seconds(stat, 100);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(*s, 3.0);
  EXPECT_FALSE(parse_proc_stat_cpu_seconds("4242 (x) S 1 2", 100).has_value());
  EXPECT_FALSE(parse_proc_stat_cpu_seconds("no parenthesis", 100).has_value());
}

TEST(ProcessCpuTest, OwnProcessCpuAgreesWithTheCpuClock) {
  auto cpu_clock = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  };
  auto before = process_cpu_seconds(getpid());
  double clock_before = cpu_clock();
  ASSERT_TRUE(before.has_value());
  // Spin for 0.3 s of CPU (bounded in wall time: the machine may be busy).
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  volatile uint64_t spin = 0;
  while (cpu_clock() - clock_before < 0.3 && std::chrono::steady_clock::now() < give_up) spin = spin + 1;
  auto after = process_cpu_seconds(getpid());
  double clock_used = cpu_clock() - clock_before;
  ASSERT_TRUE(after.has_value());
  // The same CPU time to within a few clock ticks (10 ms each on most kernels).
  EXPECT_NEAR(*after - *before, clock_used, 0.05);
  EXPECT_GE(clock_used, 0.3);
  EXPECT_FALSE(process_cpu_seconds(0x3fffffff).has_value());
}

}  // namespace
}  // namespace nasd::bench
