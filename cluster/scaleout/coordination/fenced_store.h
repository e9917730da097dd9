// What one node keeps on its drives and in its NVRAM that outlives the process, with the rules
// that guard it: the storage fence (a put of an older epoch than the slot has seen is refused)
// and the journal close (a mirror refuses an origin's records of a slot below a stamp once a
// successor has read them). Pure: the driver (the node, or the simulation) calls it and keeps it.
//
//   FencedStore  the node's metadata records of every slot (its share of the mirrored record
//                store, COORDINATION.md 4) and its units (data, modelled as versions), with a
//                fence per slot;
//   MirrorLog    the copy of one origin's NVRAM journal held by that origin's cover.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "cluster/scaleout/coordination/coord_types.h"

namespace nasd::scaleout::coord {

struct UnitId {
  uint64_t file = 0;
  uint32_t group = 0;
  Version version;
  uint16_t index = 0;
  auto tie() const { return std::tie(file, group, version.stamp.epoch, version.stamp.grant, version.n, index); }
  bool operator<(const UnitId& o) const { return tie() < o.tie(); }
};

class FencedStore {
 public:
  // Raises the slot's fence to `epoch` (never lowers it) and gives the slot's records; false
  // (fenced) when a newer epoch was seen already.
  bool open(Slot slot, uint64_t epoch, std::vector<Rec>* out);
  bool put_records(Slot slot, uint64_t epoch, const std::vector<Rec>& recs);
  bool put_unit(Slot slot, uint64_t epoch, const UnitId& unit);
  uint64_t fence(Slot slot) const;
  bool has_unit(const UnitId& unit) const { return units_.count(unit) > 0; }
  const Records& records(Slot slot) const;
  // Test-only: with false, the fence admits every epoch (the simulation must catch it).
  void set_fencing(bool on) { fencing_ = on; }

 private:
  bool admit(Slot slot, uint64_t epoch);
  std::map<Slot, uint64_t> fences_;
  std::map<Slot, Records> records_;
  std::set<UnitId> units_;
  bool fencing_ = true;
};

class MirrorLog {
 public:
  // Keeps `r`; false when its slot was closed below a stamp above r's (a copy of a record
  // held already is acknowledged again).
  bool append(const JournalRec& r);
  // Closes `slot` below `below` (never lowers a close) and gives every record of the slot
  // under a lower stamp: everything the origin acknowledged there, since it acknowledges a
  // record only once this copy holds it. A successor of the slot closes every record (the
  // old coordinator's and its tokens' writes); a forced revocation only the origin's writes
  // (`writes_only`), so the origin's own coordinator records of the slot go on.
  std::vector<JournalRec> close_and_read(Slot slot, const Stamp& below, bool writes_only);

 private:
  std::map<uint64_t, JournalRec> records_;
  std::map<Slot, Stamp> closed_;         // every record
  std::map<Slot, Stamp> closed_writes_;  // initiator writes
};

}  // namespace nasd::scaleout::coord
