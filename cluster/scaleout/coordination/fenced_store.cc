#include "cluster/scaleout/coordination/fenced_store.h"

namespace nasd::scaleout::coord {

bool FencedStore::admit(Slot slot, uint64_t epoch) {
  uint64_t& f = fences_[slot];
  if (fencing_ && epoch < f) return false;
  if (epoch > f) f = epoch;
  return true;
}

bool FencedStore::open(Slot slot, uint64_t epoch, std::vector<Rec>* out) {
  if (!admit(slot, epoch)) return false;
  out->clear();
  for (const auto& [k, r] : records_[slot]) out->push_back(r);
  return true;
}

bool FencedStore::put_records(Slot slot, uint64_t epoch, const std::vector<Rec>& recs) {
  if (!admit(slot, epoch)) return false;
  Records& mine = records_[slot];
  for (const Rec& r : recs) merge(mine, r);
  return true;
}

bool FencedStore::put_unit(Slot slot, uint64_t epoch, const UnitId& unit) {
  if (!admit(slot, epoch)) return false;
  units_.insert(unit);
  return true;
}

uint64_t FencedStore::fence(Slot slot) const {
  auto it = fences_.find(slot);
  return it == fences_.end() ? 0 : it->second;
}

const Records& FencedStore::records(Slot slot) const {
  static const Records kNone;
  auto it = records_.find(slot);
  return it == records_.end() ? kNone : it->second;
}

bool MirrorLog::append(const JournalRec& r) {
  // A copy of a record held already (its acknowledgement was lost): held before any later
  // close, so every read since has returned it.
  if (records_.count(r.seq)) return true;
  auto c = closed_.find(r.slot);
  if (c != closed_.end() && r.stamp < c->second) return false;
  auto w = closed_writes_.find(r.slot);
  if (r.write && w != closed_writes_.end() && r.stamp < w->second) return false;
  records_.emplace(r.seq, r);
  return true;
}

std::vector<JournalRec> MirrorLog::close_and_read(Slot slot, const Stamp& below, bool writes_only) {
  Stamp& c = writes_only ? closed_writes_[slot] : closed_[slot];
  if (c < below) c = below;
  std::vector<JournalRec> out;
  for (const auto& [seq, r] : records_)
    if (r.slot == slot && r.stamp < below && (r.write || !writes_only)) out.push_back(r);
  return out;
}

}  // namespace nasd::scaleout::coord
