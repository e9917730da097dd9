#include "tests/e2e/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <limits>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace nasd::e2e {

HttpReply http_request(uint16_t port, const std::string& method, const std::string& path,
                       const std::vector<std::string>& headers, const std::string& body) {
  HttpReply reply;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return reply;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return reply;
  }
  std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                    "\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  for (const auto& h : headers) req += h + "\r\n";
  req += "\r\n" + body;
  for (size_t sent = 0; sent < req.size();) {
    ssize_t n = ::send(fd, req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string raw;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  char buf[65536];
  while (raw.size() < (4u << 20) && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    raw.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos || raw.compare(0, 9, "HTTP/1.1 ") != 0) return reply;
  reply.status = std::atoi(raw.c_str() + 9);
  std::istringstream head(raw.substr(0, head_end));
  std::string line;
  std::getline(head, line);
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    size_t v = line.find_first_not_of(' ', colon + 1);
    reply.headers[name] = v == std::string::npos ? "" : line.substr(v);
  }
  reply.body = raw.substr(head_end + 4);
  return reply;
}

double ParsedMetrics::value(const std::string& name,
                            const std::map<std::string, std::string>& labels) const {
  for (const auto& s : samples) {
    if (s.name != name) continue;
    bool all = true;
    for (const auto& [k, v] : labels) {
      auto it = s.labels.find(k);
      if (it == s.labels.end() || it->second != v) all = false;
    }
    if (all) return s.value;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

namespace {

const std::regex kName("[a-zA-Z_:][a-zA-Z0-9_:]*");
const std::regex kLabelName("[a-zA-Z_][a-zA-Z0-9_]*");

double parse_value(const std::string& s, const std::string& line) {
  if (s == "+Inf") return std::numeric_limits<double>::infinity();
  if (s == "-Inf") return -std::numeric_limits<double>::infinity();
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(s, &pos);
  } catch (...) {
    pos = 0;
  }
  if (pos != s.size() || s.empty()) throw std::runtime_error("bad value in: " + line);
  return v;
}

// The family a sample belongs to: its name, or the name without a histogram/summary suffix.
std::string family_of(const std::string& name, const std::map<std::string, std::string>& types) {
  if (types.count(name)) return name;
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    std::string sfx = suffix;
    if (name.size() > sfx.size() && name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0) {
      std::string base = name.substr(0, name.size() - sfx.size());
      auto it = types.find(base);
      if (it != types.end() && (it->second == "histogram" || it->second == "summary")) return base;
    }
  }
  return "";
}

}  // namespace

ParsedMetrics parse_prometheus_text(const std::string& text) {
  ParsedMetrics out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::istringstream words(line);
      std::string hash, kind, name, rest;
      words >> hash >> kind >> name;
      if (kind != "HELP" && kind != "TYPE") continue;  // a plain comment
      if (!std::regex_match(name, kName)) throw std::runtime_error("bad metric name: " + line);
      if (kind == "TYPE") {
        words >> rest;
        if (rest != "counter" && rest != "gauge" && rest != "histogram" && rest != "summary" &&
            rest != "untyped")
          throw std::runtime_error("bad type: " + line);
        if (out.types.count(name)) throw std::runtime_error("second TYPE for " + name);
        out.types[name] = rest;
      }
      continue;
    }
    MetricSample s;
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    s.name = line.substr(0, i);
    if (!std::regex_match(s.name, kName)) throw std::runtime_error("bad sample name: " + line);
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        size_t eq = line.find('=', i);
        if (eq == std::string::npos) throw std::runtime_error("bad labels: " + line);
        std::string lname = line.substr(i, eq - i);
        if (!std::regex_match(lname, kLabelName)) throw std::runtime_error("bad label name: " + line);
        if (eq + 1 >= line.size() || line[eq + 1] != '"') throw std::runtime_error("unquoted label: " + line);
        std::string value;
        size_t j = eq + 2;
        for (; j < line.size() && line[j] != '"'; ++j) {
          if (line[j] == '\\') {
            if (++j >= line.size()) throw std::runtime_error("bad escape: " + line);
            char e = line[j];
            if (e == 'n') value += '\n';
            else if (e == '\\' || e == '"') value += e;
            else throw std::runtime_error("bad escape: " + line);
          } else {
            value += line[j];
          }
        }
        if (j >= line.size()) throw std::runtime_error("unterminated label value: " + line);
        s.labels[lname] = value;
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) throw std::runtime_error("unterminated labels: " + line);
      ++i;
    }
    if (i >= line.size() || line[i] != ' ') throw std::runtime_error("no value: " + line);
    std::istringstream rest(line.substr(i + 1));
    std::string value, timestamp;
    rest >> value >> timestamp;
    s.value = parse_value(value, line);
    if (family_of(s.name, out.types).empty())
      throw std::runtime_error("sample without a # TYPE line before it: " + line);
    out.samples.push_back(std::move(s));
  }
  // Histograms: cumulative buckets ending in +Inf == _count, per label set.
  for (const auto& [family, type] : out.types) {
    if (type != "histogram") continue;
    std::map<std::map<std::string, std::string>, std::vector<std::pair<double, double>>> series;
    for (const auto& s : out.samples) {
      if (s.name != family + "_bucket") continue;
      auto labels = s.labels;
      auto le = labels.find("le");
      if (le == labels.end()) throw std::runtime_error(family + "_bucket without le");
      double bound = parse_value(le->second, family);
      labels.erase(le);
      series[labels].push_back({bound, s.value});
    }
    for (const auto& [labels, buckets] : series) {
      for (size_t k = 1; k < buckets.size(); ++k)
        if (buckets[k].first <= buckets[k - 1].first || buckets[k].second < buckets[k - 1].second)
          throw std::runtime_error(family + ": buckets not cumulative");
      if (buckets.empty() || !std::isinf(buckets.back().first))
        throw std::runtime_error(family + ": no +Inf bucket");
      double count = out.value(family + "_count", labels);
      if (count != buckets.back().second) throw std::runtime_error(family + ": +Inf bucket != _count");
    }
  }
  return out;
}

}  // namespace nasd::e2e
