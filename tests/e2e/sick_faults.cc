#include "tests/e2e/sick_faults.h"

#include <fnmatch.h>

#include <cerrno>
#include <iomanip>
#include <sstream>

namespace nasd::e2e {
namespace {

constexpr size_t kMaxLine = 1024;

bool parse_number(const std::string& text, uint64_t max, uint64_t* out) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  *out = std::stoull(text);
  return *out <= max;
}

bool parse_fraction(const std::string& text, double* out) {
  // 0, 1, or 0.D... with at most 6 decimals: no locale, no exponent, no NaN.
  if (text == "0" || text == "1") {
    *out = text == "1" ? 1.0 : 0.0;
    return true;
  }
  if (text.size() < 3 || text.size() > 8 || text.compare(0, 2, "0.") != 0 ||
      text.find_first_not_of("0123456789", 2) != std::string::npos)
    return false;
  *out = std::stod(text);
  return true;
}

}  // namespace

std::string FaultSettings::text() const {
  std::ostringstream o;
  o << "faults";
  if (eio > 0) {
    // Fixed, as parsed: "0.000001", never "1e-06".
    std::ostringstream f;
    f << std::fixed << std::setprecision(6) << eio;
    std::string text = f.str();
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
    o << " eio=" << text;
  }
  if (slow_ms > 0) o << " slow_ms=" << slow_ms;
  if (full_after) o << " full_after=" << *full_after;
  if (!path.empty()) o << " path=" << path;
  if (seed != 1) o << " seed=" << seed;
  return o.str();
}

std::optional<SickCommand> parse_sick_command(const std::string& line, FaultSettings* settings,
                                              std::string* error) {
  if (line.size() > kMaxLine) {
    *error = "line longer than 1024 bytes";
    return std::nullopt;
  }
  std::istringstream words(line);
  std::string command, word;
  if (!(words >> command)) {
    *error = "empty command (faults, clear, status)";
    return std::nullopt;
  }
  if (command == "status" || command == "clear") {
    if (words >> word) {
      *error = command + " takes no argument";
      return std::nullopt;
    }
    if (command == "clear") *settings = FaultSettings{};
    return command == "status" ? SickCommand::Status : SickCommand::Faults;
  }
  if (command != "faults") {
    *error = "unknown command '" + command + "' (faults, clear, status)";
    return std::nullopt;
  }
  FaultSettings s;
  while (words >> word) {
    const size_t eq = word.find('=');
    const std::string key = word.substr(0, eq), value = eq == std::string::npos ? "" : word.substr(eq + 1);
    uint64_t n = 0;
    bool ok = eq != std::string::npos;
    if (!ok) {
    } else if (key == "eio") {
      ok = parse_fraction(value, &s.eio);
    } else if (key == "slow_ms") {
      ok = parse_number(value, 60000, &n);
      s.slow_ms = static_cast<int>(n);
    } else if (key == "full_after") {
      ok = parse_number(value, uint64_t{1} << 50, &n);
      s.full_after = n;
    } else if (key == "path") {
      ok = !value.empty() && value.size() <= 255;
      s.path = value;
    } else if (key == "seed") {
      ok = parse_number(value, ~uint64_t{0} >> 1, &s.seed);
    } else {
      *error = "unknown key '" + key + "' (eio, slow_ms, full_after, path, seed)";
      return std::nullopt;
    }
    if (!ok) {
      *error = "bad value in '" + word + "'";
      return std::nullopt;
    }
  }
  *settings = s;
  return SickCommand::Faults;
}

void SickFaults::set(const FaultSettings& settings) {
  std::lock_guard lock(mu_);
  settings_ = settings;
  rng_.seed(settings.seed);
}

FaultSettings SickFaults::settings() const {
  std::lock_guard lock(mu_);
  return settings_;
}

SickCounters SickFaults::counters() const {
  std::lock_guard lock(mu_);
  return counters_;
}

SickDecision SickFaults::decide(const std::string& path, uint64_t new_bytes, bool sync) {
  std::lock_guard lock(mu_);
  ++counters_.writes;
  SickDecision d;
  if (!settings_.path.empty() && fnmatch(settings_.path.c_str(), path.c_str(), 0) != 0) return d;
  d.slow_ms = settings_.slow_ms;
  if (d.slow_ms) ++counters_.slowed;
  if (settings_.eio > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < settings_.eio) {
    ++counters_.eio;
    d.error = EIO;
    return d;
  }
  if (!sync && new_bytes && settings_.full_after) {
    if (new_bytes > *settings_.full_after) {
      ++counters_.enospc;
      d.error = ENOSPC;
      return d;
    }
    *settings_.full_after -= new_bytes;
  }
  return d;
}

}  // namespace nasd::e2e
