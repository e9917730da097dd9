// What the coordinator's metadata records about one protection group: which bytes of which
// file it holds, its shape and where each unit is. Pure data, shared by the I/O engine
// (group_io.h) and the protection jobs (protection_job.h).
#pragma once

#include <cstdint>
#include <vector>

#include "cluster/scaleout/layout.h"
#include "cluster/scaleout/unit_store.h"

namespace nasd::scaleout {

struct GroupRecord {
  uint64_t file = 0;
  uint64_t group = 0;
  uint64_t version = 0;
  uint64_t offset = 0;  // of the group's first byte in the file
  uint64_t length = 0;  // data bytes held (1 .. N*U)
  GroupShape shape;
  std::vector<UnitPlace> places;  // one per unit, index order
  uint32_t unit_bytes() const {
    return static_cast<uint32_t>(length < kStripeUnit ? length : kStripeUnit);
  }
  UnitKey key(int index) const { return UnitKey{file, group, version, static_cast<uint16_t>(index)}; }
};

struct GroupHealth {
  std::vector<int> unreadable;   // units that could not be read (any reason)
  std::vector<int> corrupt;      // ... of which checksum failures
  std::vector<int> bad_parity;   // verify_group: parity units that disagree with the data
  bool readable = true;          // at most M unreadable
};

}  // namespace nasd::scaleout
