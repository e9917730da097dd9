// The human-readable result, laid out like a SPECsfs2008 ASCII report: the headline with the
// peak and overall response time, the throughput/response table, then what was tested and how.
#pragma once

#include <ostream>
#include <string>

#include "bench/benchmark.h"

namespace nasd::bench {

struct ReportLabels {
  std::string system_under_test = "unnamed NFS server";  // --server-name
  std::string notes;                                      // --notes, free text
};

void write_report(std::ostream& out, const RunConfig& config, const RunResult& result, const ReportLabels& labels);

}  // namespace nasd::bench
