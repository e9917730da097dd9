#include "tests/e2e/ha_load_args.h"

#include <charconv>
#include <functional>
#include <map>

namespace nasd::e2e {

const char kHaLoadUsage[] =
    "usage: nasd-ha-load --dir NAME [--host H] [--nfs-port P] [--mount-port P] [--export PATH]\n"
    "                    [--seconds N] [--verify-host H] [--verify-nfs-port P]\n"
    "                    [--verify-mount-port P] [--call-timeout-ms N] [--retry-budget-s N]\n"
    "                    [--report FILE] [--until-file FILE] [--verify-after FILE]\n"
    "Mounts PATH (default /r/v0) at H (127.0.0.1) P (2049) / P (20048), makes directory NAME in\n"
    "it and runs a CREATE / FILE_SYNC WRITE / MKDIR / RENAME / REMOVE load there for N seconds\n"
    "(20), retrying every unanswered or JUKEBOX call on a fresh connection, each for up to the\n"
    "retry budget (60 s); with --until-file it also ends as soon as FILE exists. Then checks, at the verify address (default: the same), that\n"
    "everything acknowledged is there and nothing else -- with --verify-after only once FILE\n"
    "exists (at most 5 minutes later: the test restarts the server first). Exit 0 when that\n"
    "holds, the load ended as asked (not on an error) and at least one call was acknowledged.\n";

namespace {

template <class T>
bool parse_number(const std::string& text, T min, T max, T* out) {
  T v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) return false;
  *out = v;
  return true;
}

}  // namespace

std::optional<HaLoadArgs> parse_ha_load_args(int argc, char** argv, std::string* error) {
  HaLoadArgs a;
  auto port = [](uint16_t* p) {
    return [p](const std::string& v) { return parse_number<uint16_t>(v, 1, 65535, p); };
  };
  auto text = [](std::string* s) {
    return [s](const std::string& v) { *s = v; return !v.empty(); };
  };
  auto count = [](int* n, int max) {
    return [n, max](const std::string& v) { return parse_number<int>(v, 1, max, n); };
  };
  const std::map<std::string, std::function<bool(const std::string&)>> options = {
      {"--host", text(&a.host)},
      {"--nfs-port", port(&a.nfs_port)},
      {"--mount-port", port(&a.mount_port)},
      {"--export", text(&a.export_path)},
      {"--dir", text(&a.dir)},
      {"--seconds", count(&a.seconds, 24 * 3600)},
      {"--verify-host", text(&a.verify_host)},
      {"--verify-nfs-port", port(&a.verify_nfs_port)},
      {"--verify-mount-port", port(&a.verify_mount_port)},
      {"--call-timeout-ms", count(&a.call_timeout_ms, 600000)},
      {"--retry-budget-s", count(&a.retry_budget_s, 3600)},
      {"--report", text(&a.report)},
      {"--until-file", text(&a.until_file)},
      {"--verify-after", text(&a.verify_after)},
  };
  for (int i = 1; i < argc; ++i) {
    std::string opt = argv[i];
    if (opt == "--help" || opt == "-h") {
      *error = "help";
      return std::nullopt;
    }
    auto it = options.find(opt);
    if (it == options.end()) {
      *error = "unknown option " + opt;
      return std::nullopt;
    }
    if (i + 1 >= argc) {
      *error = opt + " needs a value";
      return std::nullopt;
    }
    if (!it->second(argv[++i])) {
      *error = "bad value for " + opt + ": '" + argv[i] + "'";
      return std::nullopt;
    }
  }
  if (a.dir.empty() || a.dir.find('/') != std::string::npos) {
    *error = "--dir NAME is required (one name, no slash)";
    return std::nullopt;
  }
  if (a.verify_host.empty()) a.verify_host = a.host;
  if (a.verify_nfs_port == 0) a.verify_nfs_port = a.nfs_port;
  if (a.verify_mount_port == 0) a.verify_mount_port = a.mount_port;
  return a;
}

}  // namespace nasd::e2e
