// Builds Prometheus metric families from the counters the rooms already keep, at scrape time.
// Nothing here is updated on the request path: CallStats, the journal and the volumes keep
// their own atomics, and a scrape reads them once (a collector, in Prometheus terms).
//
// Conventions (https://prometheus.io/docs/practices/naming/): every name starts with `nasd_`;
// counters end in `_total`; times are seconds and sizes bytes; what differs per procedure,
// volume or peer is a label, not part of the name. Names are checked when a family is made
// (std::invalid_argument), so a bad name fails the unit test, not a scrape.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "prometheus/metric_family.h"

namespace nasd::http {

using Labels = std::vector<std::pair<std::string, std::string>>;

class MetricFamilies {
 public:
  // Each returns the family's index; samples are added with the calls below.
  size_t counter(std::string name, std::string help);
  size_t gauge(std::string name, std::string help);
  size_t histogram(std::string name, std::string help);

  void add(size_t family, const Labels& labels, double value);
  // A histogram from per-bucket (not cumulative) counts: bucket i holds the samples up to
  // upper_bounds[i] (seconds); `sum` is the total of all samples in seconds. The +Inf bucket
  // is added here.
  void add_histogram(size_t family, const Labels& labels, const std::vector<double>& upper_bounds,
                     const std::vector<uint64_t>& counts, double sum);

  // Appends the families of `other` (their names must differ from these).
  void append(MetricFamilies&& other);
  const std::vector<prometheus::MetricFamily>& families() const { return families_; }
  // The text exposition format (version 0.0.4).
  std::string text() const;

 private:
  size_t make(std::string name, std::string help, prometheus::MetricType type);
  std::vector<prometheus::MetricFamily> families_;
};

// Upper bounds in seconds of power-of-two microsecond buckets: bucket i covers samples up to
// 2^(i + shift) microseconds (CallStats: shift 1, bucket i is [2^i, 2^(i+1)) us; the NVRAM
// journal: shift 0, bucket i is [2^(i-1), 2^i) us).
std::vector<double> power_of_two_bounds_seconds(size_t buckets, int shift);

}  // namespace nasd::http
