#include "bench/csv_writer.h"

#include <iomanip>

namespace nasd::bench {

void write_csv(std::ostream& out, const RunResult& r) {
  out << "step,requested_ops,achieved_ops,mean_ms,p50_ms,p99_ms,ok,errors,late_issues,missed,errors_by_op,business_metric,mb_per_sec,server_cpu_s,server_cpu_us_per_op,disk_written_mb_per_sec\n";
  out << std::fixed;
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const StepResult& s = r.steps[i];
    out << i + 1 << ',' << std::setprecision(1) << s.requested_ops << ',' << s.achieved_ops << ','
        << std::setprecision(3) << s.mean_ms << ',' << s.p50_ms << ',' << s.p99_ms << ',' << s.ok << ','
        << s.errors << ',' << s.stats.late_issues << ',' << (s.missed ? 1 : 0) << ',';
    bool first = true;
    for (OpType op : kAllOpTypes) {
      uint64_t n = s.stats.per_op[index_of(op)].errors;
      if (n == 0) continue;
      out << (first ? "" : ";") << op_name(op) << '=' << n;
      first = false;
    }
    out << ',' << std::setprecision(0) << s.business_metric << ',' << std::setprecision(3) << s.mb_per_sec << ',';
    // Empty when the server's CPU was not measured (no --server-pid).
    if (s.server_cpu_seconds >= 0) {
      out << std::setprecision(3) << s.server_cpu_seconds << ',' << std::setprecision(2) << s.server_cpu_us_per_op();
    } else {
      out << ',';
    }
    // Empty when no disk was watched (no --disk-device).
    out << ',';
    if (s.disk_written_mb_per_sec >= 0) out << std::setprecision(1) << s.disk_written_mb_per_sec;
    out << '\n';
  }
}

}  // namespace nasd::bench
