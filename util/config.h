// The nasd configuration file: INI sections with `key = value` lines and `#` comments.
// A section header may carry a name: `[volume v0]`, `[export /r/v0]`. Every room reads its own
// sections; unknown keys are reported so that a typo in a config is not silently ignored.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <optional>
#include <string>
#include <vector>

namespace nasd {

class ConfigSection {
 public:
  ConfigSection(std::string kind, std::string name, int line) : kind_(std::move(kind)), name_(std::move(name)), line_(line) {}

  const std::string& kind() const { return kind_; }
  const std::string& name() const { return name_; }
  int line() const { return line_; }

  bool has(const std::string& key) const { return values_.count(key) != 0; }
  std::string get(const std::string& key, const std::string& dflt = "") const;
  // "4G", "512M", "64k", "1000": binary multiples. Throws ConfigError on a malformed value.
  uint64_t get_size(const std::string& key, uint64_t dflt) const;
  int64_t get_int(const std::string& key, int64_t dflt) const;
  // 0..UINT32_MAX (a volume id, a count); throws ConfigError naming the section otherwise.
  uint32_t get_u32(const std::string& key, uint32_t dflt) const;
  // true/false, yes/no, on/off, 1/0.
  bool get_bool(const std::string& key, bool dflt) const;
  // Comma-separated list, items trimmed.
  std::vector<std::string> get_list(const std::string& key) const;

  void set(const std::string& key, const std::string& value) { values_[key] = value; }
  // Keys present in the section but not in `known`; callers turn them into an error.
  std::vector<std::string> unknown_keys(const std::vector<std::string>& known) const;

 private:
  std::string kind_, name_;
  int line_;
  std::map<std::string, std::string> values_;
};

class Config {
 public:
  static Config parse(const std::string& text, const std::string& origin = "<config>");
  static Config load(const std::string& path);

  // The first section of this kind (and name, when given), or nullptr.
  const ConfigSection* section(const std::string& kind, const std::string& name = "") const;
  std::vector<const ConfigSection*> sections(const std::string& kind) const;
  const std::vector<ConfigSection>& all() const { return sections_; }
  // Adds the sections of `more` after this config's own (a node's admin-made additions).
  void append(const Config& more);
  const std::string& origin() const { return origin_; }
  // Relative paths in the config are taken relative to the config file's folder.
  std::string resolve_path(const std::string& p) const;

 private:
  std::string origin_, base_dir_;
  std::vector<ConfigSection> sections_;
};

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

uint64_t parse_size(const std::string& text);  // throws ConfigError

}  // namespace nasd
