#include "bench/mix.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace nasd::bench {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

}  // namespace

OpMix OpMix::specsfs2008() {
  OpMix m("SPECsfs2008 NFSv3");
  m.percent_[index_of(OpType::kGetattr)] = 26;
  m.percent_[index_of(OpType::kLookup)] = 24;
  m.percent_[index_of(OpType::kRead)] = 18;
  m.percent_[index_of(OpType::kWrite)] = 10;
  m.percent_[index_of(OpType::kAccess)] = 11;
  m.percent_[index_of(OpType::kSetattr)] = 4;
  m.percent_[index_of(OpType::kReaddirplus)] = 2;
  m.percent_[index_of(OpType::kReadlink)] = 1;
  m.percent_[index_of(OpType::kReaddir)] = 1;
  m.percent_[index_of(OpType::kCreate)] = 1;
  m.percent_[index_of(OpType::kRemove)] = 1;
  m.percent_[index_of(OpType::kFsstat)] = 1;
  return m;
}

OpMix OpMix::sfs97_r1() {
  OpMix m("SFS97_R1 NFSv3");
  m.percent_[index_of(OpType::kLookup)] = 27;
  m.percent_[index_of(OpType::kRead)] = 18;
  m.percent_[index_of(OpType::kWrite)] = 9;
  m.percent_[index_of(OpType::kGetattr)] = 11;
  m.percent_[index_of(OpType::kReadlink)] = 7;
  m.percent_[index_of(OpType::kReaddir)] = 2;
  m.percent_[index_of(OpType::kCreate)] = 1;
  m.percent_[index_of(OpType::kRemove)] = 1;
  m.percent_[index_of(OpType::kFsstat)] = 1;
  m.percent_[index_of(OpType::kSetattr)] = 1;
  m.percent_[index_of(OpType::kReaddirplus)] = 9;
  m.percent_[index_of(OpType::kAccess)] = 7;
  m.percent_[index_of(OpType::kCommit)] = 5;
  return m;
}

OpMix OpMix::from_shares(std::string name, std::initializer_list<std::pair<OpType, double>> shares) {
  OpMix m(std::move(name));
  for (const auto& [op, pct] : shares) {
    if (!(pct >= 0 && pct <= 100)) throw MixError("mix '" + m.name_ + "': share of " + std::string(op_name(op)) + " outside 0..100");
    m.percent_[index_of(op)] += pct;
  }
  return m;
}

OpMix OpMix::from_percentages(std::string name, const std::array<double, kOpTypeCount>& percent) {
  OpMix m(std::move(name));
  double total = 0;
  for (int i = 0; i < kOpTypeCount; ++i) {
    if (!(percent[i] >= 0 && percent[i] <= 100)) throw MixError("mix '" + m.name_ + "': a share outside 0..100");
    m.percent_[i] = percent[i];
    total += percent[i];
  }
  if (!(total > 0)) throw MixError("mix '" + m.name_ + "': all shares are 0");
  return m;
}

OpMix OpMix::builtin(const std::string& name) {
  if (name == "specsfs2008") return specsfs2008();
  if (name == "sfs97_r1") return sfs97_r1();
  throw MixError("unknown builtin mix '" + name + "' (known: specsfs2008, sfs97_r1)");
}

OpMix OpMix::parse(const std::string& text, const std::string& origin) {
  OpMix m("custom (" + origin + ")");
  std::array<bool, kOpTypeCount> seen{};
  std::istringstream in(text);
  std::string raw;
  int line = 0;
  auto fail = [&](const std::string& why) {
    throw MixError(origin + ":" + std::to_string(line) + ": " + why);
  };
  while (std::getline(in, raw)) {
    ++line;
    std::string content = trim(raw.substr(0, raw.find('#')));
    if (content.empty()) continue;
    std::istringstream fields(content);
    std::string op_text, pct_text, extra;
    fields >> op_text >> pct_text;
    if (pct_text.empty()) fail("expected `op percent`, got '" + content + "'");
    if (fields >> extra) fail("unexpected text after the percentage: '" + extra + "'");
    std::optional<OpType> op = op_from_name(op_text);
    if (!op) fail("unknown NFSv3 procedure '" + op_text + "'");
    if (seen[index_of(*op)]) fail("procedure " + op_text + " listed twice");
    if (!pct_text.empty() && pct_text.back() == '%') pct_text.pop_back();
    char* end = nullptr;
    errno = 0;
    double pct = std::strtod(pct_text.c_str(), &end);
    if (pct_text.empty() || *end != '\0' || errno != 0 || !std::isfinite(pct)) {
      fail("percentage '" + pct_text + "' is not a number");
    }
    if (pct < 0 || pct > 100) fail("percentage " + pct_text + " is outside 0..100");
    seen[index_of(*op)] = true;
    m.percent_[index_of(*op)] = pct;
  }
  double sum = m.total();
  if (std::fabs(sum - 100.0) > 0.01) {
    std::ostringstream msg;
    msg << "percentages add up to " << sum << ", not 100";
    throw MixError(origin + ": " + msg.str());
  }
  return m;
}

OpMix OpMix::load(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw MixError("cannot read mix file '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return parse(ss.str(), path);
}

double OpMix::total() const {
  double sum = 0;
  for (double p : percent_) sum += p;
  return sum;
}

std::string OpMix::describe() const {
  std::vector<OpType> ops;
  for (OpType op : kAllOpTypes) {
    if (percent(op) > 0) ops.push_back(op);
  }
  std::stable_sort(ops.begin(), ops.end(),
                   [&](OpType a, OpType b) { return percent(a) > percent(b); });
  std::ostringstream out;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i) out << ", ";
    out << op_name(ops[i]) << ' ' << percent(ops[i]) << '%';
  }
  return out.str();
}

MixSampler::MixSampler(const OpMix& mix) {
  double total = mix.total();
  if (total <= 0) throw MixError("mix '" + mix.name() + "' has no operations");
  double running = 0;
  for (OpType op : kAllOpTypes) {
    running += mix.percent(op) / total;
    cumulative_[index_of(op)] = running;
  }
  // Rounding must not leave a gap above the last non-zero share.
  for (int i = kOpTypeCount - 1; i >= 0 && cumulative_[i] >= running - 1e-12; --i) cumulative_[i] = 1.0;
}

OpType MixSampler::draw(std::mt19937_64& rng) const {
  double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  // First op whose cumulative share exceeds u; ops with zero share have an empty interval.
  auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
  if (it == cumulative_.end()) --it;
  return kAllOpTypes[it - cumulative_.begin()];
}

}  // namespace nasd::bench
