// The faults of nasd-sickfs (sickfs_main.cc), the sick disk of the tests: which writes of the
// pass-through file system fail with EIO, wait, or find the disk full. Pure: the file system asks
// decide() before every write, fsync and fallocate and does what it says; the control socket
// replaces the settings with parse_fault_settings() of a command line.
//
// A command is `faults [KEY=VALUE ...]` -- the whole new set, every key not named is off --,
// `clear` (the same as `faults` alone) or `status`. Keys:
//   eio=F          the fraction (0..1) of writes and fsyncs answered EIO
//   slow_ms=N      every write and fsync waits N ms first (at most 60000)
//   full_after=N   N more bytes of new space may be taken (writes into holes or past the end,
//                  fallocate), then ENOSPC for any that needs more: the disk is full
//   path=GLOB      only files whose path (from the file system's root, no leading '/') matches
//                  (fnmatch) are sick; default all
//   seed=N         the seed of the eio draws (default 1), so a run replays
// A line is at most 1024 bytes; anything else is refused with the reason, and the old settings
// stay.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <string>

namespace nasd::e2e {

struct FaultSettings {
  double eio = 0;
  int slow_ms = 0;
  std::optional<uint64_t> full_after;
  std::string path;  // empty: every file
  uint64_t seed = 1;
  std::string text() const;  // as a `faults` command would set it
};

enum class SickCommand { Faults, Status };

// Parses one control line; nullopt with *error. For Faults, *settings is the new set.
std::optional<SickCommand> parse_sick_command(const std::string& line, FaultSettings* settings,
                                              std::string* error);

struct SickCounters {
  uint64_t writes = 0, eio = 0, enospc = 0, slowed = 0;
};

// What to do with one operation on a file.
struct SickDecision {
  int slow_ms = 0;  // wait this long first
  int error = 0;    // then fail with this errno (0: do it)
};

class SickFaults {
 public:
  void set(const FaultSettings& settings);
  FaultSettings settings() const;
  SickCounters counters() const;
  // A write or fallocate of `path` that takes `new_bytes` of new space (0 for an overwrite in
  // place), or an fsync (new_bytes 0, `sync` true: never ENOSPC).
  SickDecision decide(const std::string& path, uint64_t new_bytes, bool sync = false);

 private:
  mutable std::mutex mu_;
  FaultSettings settings_;
  std::mt19937_64 rng_{1};
  SickCounters counters_;
};

}  // namespace nasd::e2e
