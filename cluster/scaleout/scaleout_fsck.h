// fsck of a scale-out volume at the engine level: every group of the catalog read in full,
// every unit's checksum checked, every parity unit re-encoded from the data and compared
// (GroupIo::verify_group). Read-only: repairs are the scrub's (protection_job.h).
//
// The catalog comes from the volume's coordinator; `nasd-fsck --scaleout` reads it from a text
// dump (catalog_text.h) and reaches the drives of every node directly (LocalUnits).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/scaleout/group_io.h"

namespace nasd::scaleout {

struct FsckReport {
  uint64_t groups = 0;
  uint64_t groups_clean = 0;       // every unit readable, parity consistent
  uint64_t groups_degraded = 0;    // readable, some units unreadable or parity wrong
  uint64_t groups_unreadable = 0;  // more than M units unreadable: data lost
  uint64_t units_unreadable = 0;
  uint64_t units_corrupt = 0;      // ... of which checksum failures
  uint64_t units_bad_parity = 0;   // parity that disagrees with the data
  std::vector<std::string> problems;  // one line per group with a problem (at most max_problems)
  bool clean() const { return groups == groups_clean; }
};

FsckReport fsck_groups(GroupIo& io, const std::vector<GroupRecord>& catalog,
                       size_t max_problems = 1000);
std::string format_fsck_report(const FsckReport& r);

}  // namespace nasd::scaleout
