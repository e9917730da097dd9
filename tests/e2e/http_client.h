// A minimal HTTP/1.1 client for the management listener's tests: one request per connection
// to 127.0.0.1, bounded reply (4 MiB) and time (10 s).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nasd::e2e {

struct HttpReply {
  int status = 0;  // 0: no reply
  std::map<std::string, std::string> headers;  // lower-case names; the last of repeated ones
  std::string body;
};

HttpReply http_request(uint16_t port, const std::string& method, const std::string& path,
                       const std::vector<std::string>& headers = {}, const std::string& body = "");

// Prometheus text exposition format (version 0.0.4), parsed strictly enough to catch what a
// scraper would reject: every sample belongs to a family with one # TYPE line before it, names
// and label names are valid, label values are quoted and escaped, values are numbers, a
// histogram's buckets are cumulative and end with le="+Inf" equal to its _count.
struct MetricSample {
  std::string name;                           // as written (with _bucket/_sum/_count)
  std::map<std::string, std::string> labels;  // unescaped
  double value = 0;
};
struct ParsedMetrics {
  std::map<std::string, std::string> types;  // family -> counter|gauge|histogram|...
  std::vector<MetricSample> samples;
  // The value of the sample with this name whose labels include all of `labels`; NaN if none.
  double value(const std::string& name, const std::map<std::string, std::string>& labels = {}) const;
};
// Throws std::runtime_error naming the line when the text breaks the format.
ParsedMetrics parse_prometheus_text(const std::string& text);

}  // namespace nasd::e2e
