#include "server/http/metric_families.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "prometheus/check_names.h"
#include "prometheus/text_serializer.h"

namespace nasd::http {

size_t MetricFamilies::make(std::string name, std::string help, prometheus::MetricType type) {
  if (name.rfind("nasd_", 0) != 0 || !prometheus::CheckMetricName(name))
    throw std::invalid_argument("bad metric name '" + name + "'");
  bool total = name.size() > 6 && name.compare(name.size() - 6, 6, "_total") == 0;
  if ((type == prometheus::MetricType::Counter) != total)
    throw std::invalid_argument("metric '" + name + "': counters, and only they, end in _total");
  for (const auto& f : families_)
    if (f.name == name) throw std::invalid_argument("metric '" + name + "' defined twice");
  prometheus::MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  families_.push_back(std::move(f));
  return families_.size() - 1;
}

size_t MetricFamilies::counter(std::string name, std::string help) {
  return make(std::move(name), std::move(help), prometheus::MetricType::Counter);
}
size_t MetricFamilies::gauge(std::string name, std::string help) {
  return make(std::move(name), std::move(help), prometheus::MetricType::Gauge);
}
size_t MetricFamilies::histogram(std::string name, std::string help) {
  return make(std::move(name), std::move(help), prometheus::MetricType::Histogram);
}

namespace {
std::vector<prometheus::ClientMetric::Label> to_labels(const Labels& labels) {
  std::vector<prometheus::ClientMetric::Label> out;
  for (const auto& [k, v] : labels) {
    if (!prometheus::CheckLabelName(k)) throw std::invalid_argument("bad label name '" + k + "'");
    out.push_back({k, v});
  }
  return out;
}
}  // namespace

void MetricFamilies::add(size_t family, const Labels& labels, double value) {
  prometheus::MetricFamily& f = families_.at(family);
  prometheus::ClientMetric m;
  m.label = to_labels(labels);
  if (f.type == prometheus::MetricType::Counter)
    m.counter.value = value;
  else
    m.gauge.value = value;
  f.metric.push_back(std::move(m));
}

void MetricFamilies::add_histogram(size_t family, const Labels& labels,
                                   const std::vector<double>& upper_bounds,
                                   const std::vector<uint64_t>& counts, double sum) {
  prometheus::MetricFamily& f = families_.at(family);
  if (f.type != prometheus::MetricType::Histogram || upper_bounds.size() != counts.size())
    throw std::invalid_argument("histogram '" + f.name + "': bounds and counts differ");
  prometheus::ClientMetric m;
  m.label = to_labels(labels);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    cumulative += counts[i];
    m.histogram.bucket.push_back({cumulative, upper_bounds[i]});
  }
  m.histogram.bucket.push_back({cumulative, std::numeric_limits<double>::infinity()});
  m.histogram.sample_count = cumulative;
  m.histogram.sample_sum = sum;
  f.metric.push_back(std::move(m));
}

void MetricFamilies::append(MetricFamilies&& other) {
  for (auto& f : other.families_) {
    for (const auto& mine : families_)
      if (mine.name == f.name) throw std::invalid_argument("metric '" + f.name + "' defined twice");
    families_.push_back(std::move(f));
  }
  other.families_.clear();
}

std::string MetricFamilies::text() const {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families_);
  return out.str();
}

std::vector<double> power_of_two_bounds_seconds(size_t buckets, int shift) {
  std::vector<double> out;
  for (size_t i = 0; i < buckets; ++i) out.push_back(std::ldexp(1.0, int(i) + shift) * 1e-6);
  return out;
}

}  // namespace nasd::http
