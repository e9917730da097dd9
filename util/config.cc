#include "util/config.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace nasd {
namespace {

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) b++;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) e--;
  return s.substr(b, e - b);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

uint64_t parse_size(const std::string& text) {
  std::string t = lower(trim(text));
  if (t.empty()) throw ConfigError("empty size");
  // stoull would accept a sign and wrap "-3" around to a huge size.
  if (!std::isdigit(static_cast<unsigned char>(t[0]))) throw ConfigError("bad size '" + text + "'");
  size_t pos = 0;
  unsigned long long n;
  try {
    n = std::stoull(t, &pos);
  } catch (...) {
    throw ConfigError("bad size '" + text + "'");
  }
  std::string unit = trim(t.substr(pos));
  if (!unit.empty() && unit.back() == 'b') unit.pop_back();
  if (!unit.empty() && unit.back() == 'i') unit.pop_back();
  uint64_t mult = 1;
  if (unit.empty()) mult = 1;
  else if (unit == "k") mult = 1ull << 10;
  else if (unit == "m") mult = 1ull << 20;
  else if (unit == "g") mult = 1ull << 30;
  else if (unit == "t") mult = 1ull << 40;
  else throw ConfigError("bad size unit in '" + text + "'");
  if (n > UINT64_MAX / mult) throw ConfigError("size too large: '" + text + "'");
  return n * mult;
}

std::string ConfigSection::get(const std::string& key, const std::string& dflt) const {
  auto it = values_.find(key);
  return it == values_.end() ? dflt : it->second;
}

uint64_t ConfigSection::get_size(const std::string& key, uint64_t dflt) const {
  auto it = values_.find(key);
  if (it == values_.end()) return dflt;
  try {
    return parse_size(it->second);
  } catch (const ConfigError& e) {
    throw ConfigError("line " + std::to_string(line_) + " [" + kind_ + "] " + key + ": " + e.what());
  }
}

uint32_t ConfigSection::get_u32(const std::string& key, uint32_t dflt) const {
  int64_t v = get_int(key, dflt);
  if (v < 0 || v > int64_t(UINT32_MAX)) {
    std::string where = "[" + kind_ + (name_.empty() ? "" : " " + name_) + "] ";
    throw ConfigError(where + key + ": out of range (0.." + std::to_string(UINT32_MAX) + ")");
  }
  return static_cast<uint32_t>(v);
}

int64_t ConfigSection::get_int(const std::string& key, int64_t dflt) const {
  auto it = values_.find(key);
  if (it == values_.end()) return dflt;
  size_t pos = 0;
  long long v = 0;
  try {
    v = std::stoll(it->second, &pos, 0);
  } catch (...) {
    pos = 0;
  }
  if (pos == 0 || pos != it->second.size())
    throw ConfigError("[" + kind_ + "] " + key + ": not a number: '" + it->second + "'");
  return v;
}

bool ConfigSection::get_bool(const std::string& key, bool dflt) const {
  auto it = values_.find(key);
  if (it == values_.end()) return dflt;
  std::string v = lower(it->second);
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  throw ConfigError("[" + kind_ + "] " + key + ": not a boolean: '" + it->second + "'");
}

std::vector<std::string> ConfigSection::get_list(const std::string& key) const {
  std::vector<std::string> out;
  std::stringstream ss(get(key));
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = trim(item);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::vector<std::string> ConfigSection::unknown_keys(const std::vector<std::string>& known) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : values_)
    if (std::find(known.begin(), known.end(), k) == known.end()) out.push_back(k);
  return out;
}

Config Config::parse(const std::string& text, const std::string& origin) {
  Config c;
  c.origin_ = origin;
  auto slash = origin.rfind('/');
  c.base_dir_ = slash == std::string::npos ? "." : origin.substr(0, slash);
  std::stringstream ss(text);
  std::string line;
  int lineno = 0;
  while (std::getline(ss, line)) {
    lineno++;
    auto hash = line.find('#');
    if (hash != std::string::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    if (line.front() == '[') {
      if (line.back() != ']')
        throw ConfigError(origin + ":" + std::to_string(lineno) + ": unterminated section header");
      std::string inner = trim(line.substr(1, line.size() - 2));
      auto sp = inner.find_first_of(" \t");
      std::string kind = sp == std::string::npos ? inner : inner.substr(0, sp);
      std::string name = sp == std::string::npos ? "" : trim(inner.substr(sp));
      if (kind.empty()) throw ConfigError(origin + ":" + std::to_string(lineno) + ": empty section");
      c.sections_.emplace_back(lower(kind), name, lineno);
      continue;
    }
    auto eq = line.find('=');
    if (eq == std::string::npos)
      throw ConfigError(origin + ":" + std::to_string(lineno) + ": expected key = value");
    if (c.sections_.empty())
      throw ConfigError(origin + ":" + std::to_string(lineno) + ": key outside any section");
    c.sections_.back().set(lower(trim(line.substr(0, eq))), trim(line.substr(eq + 1)));
  }
  return c;
}

Config Config::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot read config file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path);
}

void Config::append(const Config& more) {
  sections_.insert(sections_.end(), more.sections_.begin(), more.sections_.end());
}

const ConfigSection* Config::section(const std::string& kind, const std::string& name) const {
  for (const auto& s : sections_)
    if (s.kind() == kind && (name.empty() || s.name() == name)) return &s;
  return nullptr;
}

std::vector<const ConfigSection*> Config::sections(const std::string& kind) const {
  std::vector<const ConfigSection*> out;
  for (const auto& s : sections_)
    if (s.kind() == kind) out.push_back(&s);
  return out;
}

std::string Config::resolve_path(const std::string& p) const {
  if (p.empty() || p.front() == '/') return p;
  return base_dir_ + "/" + p;
}

}  // namespace nasd
