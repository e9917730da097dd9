// verify() of an AckedLoad after a failover: at an address that may still be coming back (the
// surviving node, or the node that just took its volumes back), so it waits, bounded, for the
// load's directory handle to answer before it reads anything back.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/e2e/acked_load.h"

namespace nasd::e2e {

struct HaVerifyTarget {
  std::string host;
  uint16_t nfs_port = 0;
  uint16_t mount_port = 0;
  std::string export_path;
  std::string dir_name;  // the load's directory, in the export's root
};

// The discrepancies (empty: verified). Besides AckedLoad::verify: the same directory handle
// still answers GETATTR (not STALE), and MNT plus LOOKUP of the directory at the target give
// that same handle. Connection failures and JUKEBOX are waited out for up to `budget`.
std::vector<std::string> verify_after_failover(const AckedLoad& load, const Fh& dir,
                                               const HaVerifyTarget& target,
                                               std::chrono::milliseconds budget);

}  // namespace nasd::e2e
