// The command line of nasd-ha-load (see ha_load_main.cc): where to load, for how long, and
// where to check the result afterwards.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace nasd::e2e {

struct HaLoadArgs {
  std::string host = "127.0.0.1";
  uint16_t nfs_port = 2049;
  uint16_t mount_port = 20048;
  std::string export_path = "/r/v0";
  std::string dir;  // the directory the load makes and works in; required
  int seconds = 20;
  // When set, the load also ends as soon as this file exists (`--seconds` stays the bound): a
  // test whose steps take longer on a slow machine ends the load after its last step, so the
  // checks that the load resumed after each step do not depend on the machine's speed.
  std::string until_file;
  // When set, the read-back waits (at most 5 minutes) until this file exists: a test kills and
  // restarts the server after the load, then checks that what it acknowledged survived.
  std::string verify_after;
  // Where verify() reads back; each defaults to the load's own.
  std::string verify_host;
  uint16_t verify_nfs_port = 0;
  uint16_t verify_mount_port = 0;
  int call_timeout_ms = 5000;   // one attempt
  int retry_budget_s = 60;      // one call, over all its attempts
  std::string report;           // key=value file; empty: none
};

extern const char kHaLoadUsage[];

// Parses argv; nullopt with `*error` set when it is wrong (or "help" for --help). Fills in the
// verify defaults.
std::optional<HaLoadArgs> parse_ha_load_args(int argc, char** argv, std::string* error);

}  // namespace nasd::e2e
