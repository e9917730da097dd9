// The SPEC SFS2014 workloads as business-metric loads: one business metric (a VDA stream, a
// software build, a virtual desktop, a database, an EDA job set) asks for a fixed op rate, a fixed
// share of every NFS procedure, and a fixed amount of capacity, so stepping the metric 1, 2, 4 ...
// steps the load and grows the fileset with it, as SFS2014 does.
//
// SFS2014 defines its workloads at the POSIX level (read_file, stat, mkdir ... run by netmist)
// and the user's guide gives the op distributions only as tables that could not be read while
// writing this. So, per workload, what is taken from a source and what is an NFSv3-level
// approximation is written next to each figure (`provenance`) and in bench/README.md:
//   confirmed (SFS2014 SP2 user's guide, business-metric requirements table): the capacity per
//     business metric, VDA 24 GB/stream, VDI 12 GB/desktop, DATABASE 24 GB/database, SWBUILD
//     5 GB/build, EDA 11 GiB/job set;
//   confirmed (SPEC's "What's new in SFS2014 SP2"): EDA_FRONTEND processes send 100 ops/s each at
//     16 KiB files plus as many empty files;
//   derived from the seed SFS2014_vda report (shared/seeds/004): about 10 ops/s and 4.6 MB/s per
//     VDA stream, i.e. ~0.46 MB per op, i.e. mostly large transfers;
//   NOT confirmed: every operation mix, the other op rates and transfer sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/fileset_plan.h"
#include "bench/mix.h"

namespace nasd::bench {

struct Sfs2014Workload {
  std::string name;                       // --workload value: vda, swbuild, vdi, database, eda
  std::string report_name;                // "SPEC SFS2014_vda"-style title word: "vda"
  std::string metric_unit;                // "Streams", "Builds", ...
  OpMix mix;
  double ops_per_metric = 0;              // requested ops/s for one business metric
  uint32_t transfer_bytes = 0;            // READ/WRITE size (capped by the server's rtmax/wtmax)
  std::vector<FileSizeBucket> file_sizes; // the data files' size distribution
  double capacity_bytes_per_metric = 0;   // fileset bytes one business metric needs
  std::string provenance;                 // which of the figures above are confirmed, which are not
};

// Throws MixError naming the known workloads for any other name.
const Sfs2014Workload& sfs2014_workload(const std::string& name);
const std::vector<std::string>& sfs2014_workload_names();

// `--business-metric 1,2,4`: whole, positive, strictly increasing; throws StepPlanError.
std::vector<double> parse_business_metrics(const std::string& text);

// Requested ops/s of each step: metric × the workload's ops per metric.
std::vector<double> business_metric_loads(const Sfs2014Workload& w, const std::vector<double>& metrics);

// Fileset MiB per requested op/s that makes the fileset grow as SFS2014's capacity per business
// metric, times `scale` (1 = SPEC's capacity; a laptop test asks for 1e-5).
double fileset_mib_per_op(const Sfs2014Workload& w, double scale);

}  // namespace nasd::bench
