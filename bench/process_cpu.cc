#include "bench/process_cpu.h"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>

namespace nasd::bench {

std::optional<double> parse_proc_stat_cpu_seconds(const std::string& stat, long ticks_per_second) {
  // "pid (comm) state ppid ...": the fields after the last ')' start with field 3 (state).
  size_t close = stat.rfind(')');
  if (close == std::string::npos || ticks_per_second <= 0) return std::nullopt;
  std::istringstream in(stat.substr(close + 1));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int n = 3; n <= 15; ++n) {
    if (!(in >> field)) return std::nullopt;
    try {
      if (n == 14) utime = std::stoull(field);
      if (n == 15) stime = std::stoull(field);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return static_cast<double>(utime + stime) / static_cast<double>(ticks_per_second);
}

std::optional<double> process_cpu_seconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  if (!f) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return parse_proc_stat_cpu_seconds(text, sysconf(_SC_CLK_TCK));
}

}  // namespace nasd::bench
