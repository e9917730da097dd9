#include "bench/plot.h"

#include <sys/wait.h>

#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace nasd::bench {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// gnuplot single-quoted strings only treat '' specially.
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

std::string base_name(const std::string& path) {
  size_t slash = path.find_last_of('/');
  std::string b = slash == std::string::npos ? path : path.substr(slash + 1);
  if (ends_with(b, ".csv")) b.resize(b.size() - 4);
  return b;
}

}  // namespace

std::string gnuplot_script(const std::vector<std::string>& csvs, const std::string& output) {
  if (csvs.empty()) throw std::invalid_argument("plot: no CSV files given");
  std::ostringstream g;
  if (ends_with(output, ".png")) {
    g << "set terminal pngcairo size 900,600\n";
  } else if (ends_with(output, ".svg")) {
    g << "set terminal svg size 900,600\n";
  } else {
    throw std::invalid_argument("plot: output '" + output + "' must end in .png or .svg");
  }
  g << "set output " << quoted(output) << "\n"
    << "set datafile separator ','\n"
    << "set title 'Response time against throughput'\n"
    << "set xlabel 'Throughput (ops/sec)'\n"
    << "set ylabel 'Response (msec)'\n"
    << "set grid\nset key top left\nset xrange [0:*]\nset yrange [0:*]\n"
    << "plot ";
  for (size_t i = 0; i < csvs.size(); ++i) {
    // Column 3 is achieved ops/s, 4 the mean response; the header row is skipped.
    g << (i ? ", \\\n     " : "") << quoted(csvs[i]) << " every ::1 using 3:4 with linespoints lw 2 pt 7 title "
      << quoted(base_name(csvs[i]));
  }
  g << "\n";
  return g.str();
}

int run_gnuplot(const std::vector<std::string>& csvs, const std::string& output, std::string* error) {
  std::string script = gnuplot_script(csvs, output);
  FILE* p = popen("gnuplot", "w");
  if (!p) {
    *error = "cannot start gnuplot";
    return -1;
  }
  fwrite(script.data(), 1, script.size(), p);
  int status = pclose(p);
  if (status == -1 || !WIFEXITED(status)) {
    *error = "gnuplot did not finish";
    return -1;
  }
  if (WEXITSTATUS(status) != 0) *error = "gnuplot failed with status " + std::to_string(WEXITSTATUS(status));
  return WEXITSTATUS(status);
}

}  // namespace nasd::bench
