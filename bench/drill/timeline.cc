#include "bench/drill/timeline.h"

#include <sys/wait.h>

#include <cstdio>
#include <sstream>

namespace nasd::drill {
namespace {

std::string gnuplot_quoted(const std::string& s) {  // only '' is special in '...'
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::vector<uint64_t> ops_per_second(const std::vector<int64_t>& acks, int64_t start_ms, int64_t end_ms) {
  std::vector<uint64_t> out(end_ms > start_ms ? static_cast<size_t>((end_ms - start_ms) / 1000 + 1) : 1, 0);
  for (int64_t t : acks) {
    if (t < start_ms) continue;
    const size_t s = static_cast<size_t>((t - start_ms) / 1000);
    if (s < out.size()) ++out[s];
  }
  return out;
}

void write_ops_csv(std::ostream& out, const std::vector<uint64_t>& per_second, int64_t start_ms) {
  out << "second,unix_ms,ops\n";
  for (size_t s = 0; s < per_second.size(); ++s)
    out << s << "," << start_ms + static_cast<int64_t>(s) * 1000 << "," << per_second[s] << "\n";
}

std::string ops_plot_script(const std::string& csv, const std::vector<TimelineMark>& marks, int64_t start_ms,
                            const std::string& svg) {
  std::ostringstream g;
  g << "set terminal svg size 1000,500 dynamic\n";
  g << "set output " << gnuplot_quoted(svg) << "\n";
  g << "set datafile separator ','\n";
  g << "set title 'nasd-drill: acknowledged client operations per second'\n";
  g << "set xlabel 'seconds since the drill started'\nset ylabel 'ops/s'\nset grid\nset yrange [0:*]\n";
  for (const TimelineMark& m : marks) {
    const double x = (m.at_ms - start_ms) / 1000.0;
    g << "set arrow from " << x << ", graph 0 to " << x << ", graph 1 nohead lc rgb 'red' dt 2\n";
    g << "set label " << gnuplot_quoted(m.label) << " at " << x << ", graph 0.95 rotate by 90 right "
      << "offset -0.6,0 textcolor rgb 'red' font ',9'\n";
  }
  g << "plot " << gnuplot_quoted(csv) << " using 1:3 every ::1 with steps lw 1.5 title 'all clients'\n";
  return g.str();
}

int plot_ops(const std::string& csv, const std::vector<TimelineMark>& marks, int64_t start_ms,
             const std::string& svg, std::string* error) {
  const std::string script = ops_plot_script(csv, marks, start_ms, svg);
  FILE* p = popen("gnuplot", "w");
  if (!p) {
    *error = "cannot start gnuplot";
    return -1;
  }
  fwrite(script.data(), 1, script.size(), p);
  const int status = pclose(p);
  if (!WIFEXITED(status)) {
    *error = "gnuplot did not finish";
    return -1;
  }
  if (WEXITSTATUS(status) != 0) *error = "gnuplot failed with status " + std::to_string(WEXITSTATUS(status));
  return WEXITSTATUS(status);
}

}  // namespace nasd::drill
