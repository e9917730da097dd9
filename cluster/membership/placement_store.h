// Where the placement record (placement.h) is kept: at the cluster's lease authority, so the
// designated owner of every EVS lives where the leases do and every node reads one truth.
//   file: `<lease_dir>/placement` (written to a temporary file and renamed; writers serialize
//         on `<lease_dir>/placement.lock`), its version a counter kept in the file;
//   etcd: the key `<prefix>placement`, its version the key's mod_revision.
// Every write is a compare-and-swap on the version read. A hand-over is written only while the
// node still holds the volume's lease at the epoch it closed the volume under (file: the lease
// record is checked under its own lock, with the placement lock held; etcd: one transaction
// that also compares the lease key's create_revision), so a node that stalled after its close
// and lost the lease can never mark a volume clean that a later owner has written to since.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "cluster/membership/authority_options.h"
#include "cluster/membership/placement.h"

namespace nasd::membership {

enum class PlacementWrite {
  Written,      // stored; `next.version` is the new version
  Conflict,     // the record changed since it was read (or the lease check failed)
  Unreachable,  // the authority could not be consulted: assume nothing
};

class PlacementStore {
 public:
  virtual ~PlacementStore() = default;
  // The stored record; *found false when there is none yet. False (and *error) when the
  // authority cannot be read or the record does not parse.
  virtual bool read(Placement* out, bool* found, std::string* error) = 0;
  // Stores `next` if the record's version is still `next.version` (0: there is none yet), and
  // sets `next.version` to the new one.
  virtual PlacementWrite write(Placement& next, std::string* error) = 0;
  // As write(), and only while `node` holds the lease of `volume` at `epoch`.
  virtual PlacementWrite write_holding(Placement& next, uint32_t volume, const std::string& node,
                                       uint64_t epoch, std::string* error) = 0;
};

std::unique_ptr<PlacementStore> make_placement_store(const AuthorityOptions& options);

// Read, change, write until the write is not a conflict (at most `attempts` times). `change`
// returns "" when it changed the record, or why it cannot. Returns "" on success (with the
// record written in *result), or the reason.
std::string update_placement(PlacementStore& store, const Placement& from_config,
                             const std::function<std::string(Placement&)>& change,
                             Placement* result, int attempts = 8);

// Reads the record, storing the config's placement first when there is none.
bool read_or_create_placement(PlacementStore& store, const Placement& from_config,
                              Placement* out, std::string* error);

}  // namespace nasd::membership
