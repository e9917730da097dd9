// The clients' acknowledged operations per second over a drill, as a CSV and an SVG plot
// (gnuplot, as `nasd-loadgen plot` draws), with each fault marked where it was injected.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace nasd::drill {

struct TimelineMark {
  int64_t at_ms = 0;
  std::string label;
};

// Acknowledgements (Unix ms, any order) counted per whole second from `start_ms` to `end_ms`.
std::vector<uint64_t> ops_per_second(const std::vector<int64_t>& acks, int64_t start_ms, int64_t end_ms);
// Columns: second,unix_ms,ops
void write_ops_csv(std::ostream& out, const std::vector<uint64_t>& per_second, int64_t start_ms);
std::string ops_plot_script(const std::string& csv, const std::vector<TimelineMark>& marks, int64_t start_ms,
                            const std::string& svg);
// Runs gnuplot; its exit status, -1 when it could not be started (*error says why).
int plot_ops(const std::string& csv, const std::vector<TimelineMark>& marks, int64_t start_ms,
             const std::string& svg, std::string* error);

}  // namespace nasd::drill
