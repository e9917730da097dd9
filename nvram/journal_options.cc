#include "nvram/journal_options.h"

namespace nasd::nvram {

namespace {

std::string join_path(const std::string& dir, const std::string& file) {
  if (file.empty() || file[0] == '/') return file;
  if (dir.empty()) return file;
  return dir.back() == '/' ? dir + file : dir + "/" + file;
}

std::chrono::milliseconds get_ms(const ConfigSection& s, const std::string& key,
                                 std::chrono::milliseconds dflt) {
  int64_t v = s.get_int(key, dflt.count());
  if (v < 0) throw ConfigError("[nvram] " + key + " must not be negative");
  return std::chrono::milliseconds(v);
}

}  // namespace

JournalOptions JournalOptions::from_config(const Config& cfg, const std::string& data_dir) {
  JournalOptions o;
  o.path = join_path(data_dir, "nvram.img");
  const ConfigSection* s = cfg.section("nvram");
  if (s == nullptr) return o;

  auto unknown = s->unknown_keys({"file", "size", "mode", "flush_threshold", "flush_interval_ms",
                                  "space_wait_ms", "mirror", "mirror_policy",
                                  "mirror_timeout_ms", "mirror_key", "mirror_name"});
  if (!unknown.empty()) throw ConfigError("[nvram] unknown key '" + unknown.front() + "'");

  o.path = join_path(data_dir, s->get("file", "nvram.img"));
  o.size = s->get_size("size", o.size);
  if (o.size < kMinRegionSize) throw ConfigError("[nvram] size is too small");
  if (o.size > kMaxRegionSize) throw ConfigError("[nvram] size is too large (at most 128G)");

  std::string mode = s->get("mode", "process");
  if (mode == "process")
    o.mode = DurabilityMode::Process;
  else if (mode == "host")
    o.mode = DurabilityMode::Host;
  else if (mode == "off")
    o.enabled = false;
  else
    throw ConfigError("[nvram] mode must be 'process', 'host' or 'off', not '" + mode + "'");

  int64_t pct = s->get_int("flush_threshold", o.flush_threshold_pct);
  if (pct < 1 || pct > 95) throw ConfigError("[nvram] flush_threshold must be 1..95 (percent)");
  o.flush_threshold_pct = static_cast<uint32_t>(pct);
  o.flush_interval = get_ms(*s, "flush_interval_ms", o.flush_interval);
  o.space_wait = get_ms(*s, "space_wait_ms", o.space_wait);

  o.mirror = s->get("mirror", "");
  o.mirror_key_file = join_path(data_dir, s->get("mirror_key", "cluster.key"));
  o.mirror_peer = s->get("mirror_name", "mirror");
  std::string policy = s->get("mirror_policy", "continue");
  if (policy == "continue")
    o.mirror_policy = MirrorPolicy::Continue;
  else if (policy == "fail")
    o.mirror_policy = MirrorPolicy::Fail;
  else
    throw ConfigError("[nvram] mirror_policy must be 'continue' or 'fail', not '" + policy + "'");
  o.mirror_timeout = get_ms(*s, "mirror_timeout_ms", o.mirror_timeout);
  return o;
}

}  // namespace nasd::nvram
