// An operation mix: what share of the requests each NFS procedure gets, and a sampler that draws
// procedures in those proportions.
#pragma once

#include <array>
#include <initializer_list>
#include <utility>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>

#include "bench/op_type.h"

namespace nasd::bench {

class OpMix {
 public:
  // SPECsfs2008 NFSv3: GETATTR 26, LOOKUP 24, READ 18, WRITE 10, ACCESS 11, SETATTR 4,
  // READDIRPLUS 2, READLINK 1, READDIR 1, CREATE 1, REMOVE 1, FSSTAT 1.
  static OpMix specsfs2008();
  // SFS97_R1 (SFS 3.0) NFSv3 as published in comparisons of the two suites. The published table
  // adds up to 99%, not 100%; the weights are used as given and normalised by the sampler.
  static OpMix sfs97_r1();
  // Builtin by name ("specsfs2008", "sfs97_r1"); throws MixError for any other name.
  static OpMix builtin(const std::string& name);
  // `op percent` lines, `#` comments and blank lines allowed. Every line is checked: unknown
  // procedure, duplicate, negative or non-numeric percentage, or a total that is not 100 (to 0.01)
  // is a MixError naming the line.
  static OpMix parse(const std::string& text, const std::string& origin = "<mix>");
  static OpMix load(const std::string& path);
  // A named mix from (procedure, percent) pairs, for builtin workloads; shares need not add up to
  // 100 (the sampler normalises), but each must be in 0..100.
  static OpMix from_shares(std::string name, std::initializer_list<std::pair<OpType, double>> shares);
  // The same from one percentage per procedure (index_of order), as a coordinator sends a mix
  // to its agents; throws MixError for a share outside 0..100 or a total of 0.
  static OpMix from_percentages(std::string name, const std::array<double, kOpTypeCount>& percent);

  const std::string& name() const { return name_; }
  double percent(OpType op) const { return percent_[index_of(op)]; }
  double total() const;
  // "GETATTR 26%, LOOKUP 24%, ..." in descending share, for the report.
  std::string describe() const;

 private:
  OpMix(std::string name) : name_(std::move(name)) {}
  std::string name_;
  std::array<double, kOpTypeCount> percent_{};
};

struct MixError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Draws procedures with probability percent/total, one uniform number per draw.
class MixSampler {
 public:
  explicit MixSampler(const OpMix& mix);
  OpType draw(std::mt19937_64& rng) const;

 private:
  std::array<double, kOpTypeCount> cumulative_{};  // running sum of shares, last == 1.0
};

}  // namespace nasd::bench
