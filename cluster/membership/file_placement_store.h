// The placement record in the lease folder (placement_store.h): `<dir>/placement`, replaced by
// rename (a reader never sees half a record), writers serialized on `<dir>/placement.lock`.
#pragma once

#include <functional>
#include <string>

#include "cluster/membership/placement_store.h"

namespace nasd::membership {

class FilePlacementStore : public PlacementStore {
 public:
  using Clock = std::function<int64_t()>;  // the lease files' clock, milliseconds
  // `dir` (the file lease authority's folder) must exist. `clock` defaults to the wall clock.
  explicit FilePlacementStore(std::string dir, Clock clock = {});

  bool read(Placement* out, bool* found, std::string* error) override;
  PlacementWrite write(Placement& next, std::string* error) override;
  PlacementWrite write_holding(Placement& next, uint32_t volume, const std::string& node,
                               uint64_t epoch, std::string* error) override;

 private:
  PlacementWrite write_locked(Placement& next, const std::function<bool(std::string*)>& check,
                              std::string* error);

  const std::string dir_;
  const Clock clock_;
};

}  // namespace nasd::membership
