#include "bench/sfs2014_workload.h"

#include <cmath>

#include "bench/step_plan.h"

namespace nasd::bench {

namespace {

constexpr uint64_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;
constexpr double kGB = 1e9;  // the guide says "Gigabytes" for all but EDA, which says GiB

std::vector<Sfs2014Workload> make_all() {
  using O = OpType;
  std::vector<Sfs2014Workload> all;

  // VDA: one stream is an ingest writer (VDA1) and its companion readers (VDA2). Large sequential
  // transfers dominate; the 10 ops/s and 512 KiB transfers reproduce the seed report's ratio of
  // MB/s to ops/s. The split between WRITE and READ is not confirmed.
  all.push_back({"vda", "vda", "Streams",
                 OpMix::from_shares("SFS2014 VDA (NFSv3 approximation)",
                                    {{O::kWrite, 45}, {O::kRead, 45}, {O::kGetattr, 4}, {O::kLookup, 2},
                                     {O::kAccess, 2}, {O::kCommit, 1}, {O::kFsstat, 1}}),
                 10, 512 * kKiB, {{256 * kMiB, 50}, {1 * kGiB, 50}}, 24 * kGB,
                 "capacity 24 GB/stream confirmed; 10 ops/s and ~0.5 MB/op derived from the seed "
                 "SFS2014_vda report; the op mix and file sizes are not confirmed"});

  // SWBUILD: metadata-heavy ("make" over tens of thousands of small files): mostly attribute
  // checks, some whole-file reads and writes of small files.
  all.push_back({"swbuild", "swbuild", "Builds",
                 OpMix::from_shares("SFS2014 SWBUILD (NFSv3 approximation)",
                                    {{O::kGetattr, 60}, {O::kLookup, 12}, {O::kAccess, 6}, {O::kRead, 6},
                                     {O::kWrite, 7}, {O::kReaddirplus, 3}, {O::kCreate, 2}, {O::kRemove, 2},
                                     {O::kSetattr, 1}, {O::kFsstat, 1}}),
                 500, 16 * kKiB,
                 {{1 * kKiB, 20}, {4 * kKiB, 30}, {16 * kKiB, 30}, {64 * kKiB, 15}, {256 * kKiB, 5}}, 5 * kGB,
                 "capacity 5 GB/build confirmed; 500 ops/s per build, the op mix, transfer and file "
                 "sizes are not confirmed"});

  // VDI: desktops' disk images on NFS, write-heavy random I/O in large image files.
  all.push_back({"vdi", "vdi", "Desktops",
                 OpMix::from_shares("SFS2014 VDI (NFSv3 approximation)",
                                    {{O::kWrite, 55}, {O::kRead, 25}, {O::kGetattr, 10}, {O::kAccess, 3},
                                     {O::kLookup, 2}, {O::kCommit, 4}, {O::kFsstat, 1}}),
                 100, 32 * kKiB, {{512 * kMiB, 100}}, 12 * kGB,
                 "capacity 12 GB/desktop confirmed; 100 ops/s per desktop, the op mix, transfer and "
                 "file sizes are not confirmed"});

  // DATABASE: table files read and written at random page offsets plus a sequential log.
  all.push_back({"database", "database", "Databases",
                 OpMix::from_shares("SFS2014 DATABASE (NFSv3 approximation)",
                                    {{O::kRead, 70}, {O::kWrite, 22}, {O::kCommit, 3}, {O::kGetattr, 4},
                                     {O::kAccess, 1}}),
                 500, 8 * kKiB, {{1 * kGiB, 90}, {256 * kMiB, 10}}, 24 * kGB,
                 "capacity 24 GB/database confirmed; 500 ops/s per database, the op mix, 8 KiB pages "
                 "and file sizes are not confirmed"});

  // EDA: a job set is front-end processes (metadata-heavy, 16 KiB files plus as many empty ones)
  // and back-end processes (larger sequential I/O). 100 ops/s per front-end process and its files
  // are confirmed; the job set's 5 processes and the mix are not.
  all.push_back({"eda", "eda", "Job_Sets",
                 OpMix::from_shares("SFS2014 EDA (NFSv3 approximation)",
                                    {{O::kGetattr, 38}, {O::kLookup, 15}, {O::kAccess, 10}, {O::kRead, 15},
                                     {O::kWrite, 12}, {O::kCreate, 3}, {O::kRemove, 2}, {O::kSetattr, 3},
                                     {O::kReaddir, 2}}),
                 500, 32 * kKiB, {{16 * kKiB, 90}, {1 * kMiB, 10}}, 11.0 * kGiB,
                 "capacity 11 GiB/job set, 100 ops/s per front-end process and its 16 KiB files "
                 "confirmed; 5 processes per job set, the mix and the back-end sizes are not"});
  return all;
}

const std::vector<Sfs2014Workload>& all_workloads() {
  static const std::vector<Sfs2014Workload> all = make_all();
  return all;
}

}  // namespace

const std::vector<std::string>& sfs2014_workload_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& w : all_workloads()) n.push_back(w.name);
    return n;
  }();
  return names;
}

const Sfs2014Workload& sfs2014_workload(const std::string& name) {
  for (const auto& w : all_workloads()) {
    if (w.name == name) return w;
  }
  std::string known;
  for (const auto& n : sfs2014_workload_names()) known += (known.empty() ? "" : ", ") + n;
  throw MixError("unknown SFS2014 workload '" + name + "' (known: " + known + ")");
}

std::vector<double> parse_business_metrics(const std::string& text) {
  std::vector<double> metrics = parse_load_list(text);
  for (size_t i = 0; i < metrics.size(); ++i) {
    if (metrics[i] != std::floor(metrics[i]) || metrics[i] < 1) {
      throw StepPlanError("business metric '" + std::to_string(metrics[i]) + "' is not a whole number >= 1");
    }
    if (i > 0 && metrics[i] <= metrics[i - 1]) {
      throw StepPlanError("business metrics must increase step by step");
    }
  }
  return metrics;
}

std::vector<double> business_metric_loads(const Sfs2014Workload& w, const std::vector<double>& metrics) {
  std::vector<double> loads;
  for (double m : metrics) loads.push_back(m * w.ops_per_metric);
  return loads;
}

double fileset_mib_per_op(const Sfs2014Workload& w, double scale) {
  return w.capacity_bytes_per_metric * scale / w.ops_per_metric / static_cast<double>(kMiB);
}

}  // namespace nasd::bench
