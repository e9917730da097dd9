#include "server/nlm/nlm_options.h"

#include <unistd.h>

#include "util/net.h"

namespace nasd::nlm {
namespace {

int64_t in_range(const ConfigSection& s, const std::string& key, int64_t dflt, int64_t lo,
                 int64_t hi) {
  int64_t v = s.get_int(key, dflt);
  if (v < lo || v > hi)
    throw ConfigError("[nlm] " + key + " out of range (" + std::to_string(lo) + ".." +
                      std::to_string(hi) + ")");
  return v;
}

std::string default_notify_name(const Config& config) {
  const ConfigSection* node = config.section("node");
  std::string listen = node ? node->get("listen", "") : "";
  if (!util::is_any_address(listen)) return listen;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == 0) return "localhost";
  return host;
}

}  // namespace

NlmOptions NlmOptions::from_config(const Config& config) {
  NlmOptions o;
  o.notify_name = default_notify_name(config);
  const ConfigSection* s = config.section("nlm");
  if (!s) return o;
  auto unknown = s->unknown_keys({"grace_ms", "notify_name", "max_locks", "max_locks_per_host",
                                  "max_locks_per_file", "max_hosts", "max_names_per_address",
                                  "callback_timeout_ms", "callback_attempts", "callback_threads",
                                  "callback_queue_per_host"});
  if (!unknown.empty())
    throw ConfigError(config.origin() + ": [nlm] unknown key '" + unknown[0] + "'");
  o.grace_ms = static_cast<uint32_t>(in_range(*s, "grace_ms", o.grace_ms, 0, 3600000));
  o.notify_name = s->get("notify_name", o.notify_name);
  if (o.notify_name.empty() || o.notify_name.size() > 1024)
    throw ConfigError("[nlm] notify_name must be 1 to 1024 characters");
  o.max_locks = static_cast<size_t>(in_range(*s, "max_locks", o.max_locks, 16, 1 << 26));
  o.max_locks_per_host = static_cast<size_t>(
      in_range(*s, "max_locks_per_host", o.max_locks_per_host, 16, 1 << 26));
  o.max_locks_per_file = static_cast<size_t>(
      in_range(*s, "max_locks_per_file", o.max_locks_per_file, 16, 1 << 26));
  o.max_hosts = static_cast<size_t>(in_range(*s, "max_hosts", o.max_hosts, 1, 1 << 20));
  o.max_names_per_address = static_cast<size_t>(
      in_range(*s, "max_names_per_address", o.max_names_per_address, 1, 1 << 20));
  o.callback_threads =
      static_cast<uint32_t>(in_range(*s, "callback_threads", o.callback_threads, 2, 64));
  o.callback_queue_per_host = static_cast<size_t>(
      in_range(*s, "callback_queue_per_host", o.callback_queue_per_host, 1, 1 << 16));
  o.callback_timeout_ms =
      static_cast<uint32_t>(in_range(*s, "callback_timeout_ms", o.callback_timeout_ms, 10, 60000));
  o.callback_attempts =
      static_cast<uint32_t>(in_range(*s, "callback_attempts", o.callback_attempts, 1, 100));
  return o;
}

}  // namespace nasd::nlm
