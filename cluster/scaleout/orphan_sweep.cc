#include "cluster/scaleout/orphan_sweep.h"

#include <sstream>

namespace nasd::scaleout {

namespace {
constexpr uint64_t kCounterBits = 40;
constexpr uint64_t kCounterMask = (1ull << kCounterBits) - 1;
constexpr uint64_t kClientBit = 1ull << 63;
constexpr uint64_t kMetadataFileId = 0;  // ifs_state.h kMetadataFile (checked in ifs_sweep.cc)
}  // namespace

bool version_settled(const SweepFence& f, uint64_t version) {
  if (version & kClientBit) {
    const uint32_t epoch = static_cast<uint32_t>((version >> kCounterBits) & 0x7fffff);
    if (epoch != (f.client_epoch & 0x7fffff)) return epoch < (f.client_epoch & 0x7fffff);
    return (version & kCounterMask) < f.client_floor;
  }
  return (version >> kCounterBits) <= f.job_epoch;
}

std::string SweepProgress::text() const {
  std::ostringstream o;
  o << "orphan sweep: " << (running ? "running" : "idle") << ", " << sweeps << " done; last: "
    << drives_listed << " drives listed, " << drives_skipped << " skipped, " << units_seen
    << " units seen, " << units_referenced << " referenced, " << units_young << " young, "
    << units_dropped << " orphans dropped; " << units_dropped_total << " dropped in all";
  return o.str();
}

OrphanSweep::OrphanSweep(SweepFence fence, const std::vector<UnitRef>& referenced,
                         const Topology& topology)
    : fence_(fence) {
  for (const UnitRef& u : referenced) referenced_.insert({{u.place.node, u.place.drive}, u.key});
  progress_.running = true;
  for (const NodeState& n : topology.nodes) {
    for (uint32_t d = 0; d < n.drives.size(); d++) {
      if (!topology.usable(n.id, d)) {
        ++progress_.drives_skipped;
        continue;
      }
      SweepAction a;
      a.kind = SweepAction::Kind::List;
      a.place = UnitPlace{n.id, d};
      pending_[{n.id, d}] = a.from;
      actions_.push_back(std::move(a));
    }
  }
  if (pending_.empty()) {
    progress_.running = false;
    ++progress_.sweeps;
  }
}

std::vector<SweepAction> OrphanSweep::take_actions() {
  std::vector<SweepAction> out;
  out.swap(actions_);
  return out;
}

void OrphanSweep::listed(const UnitPlace& place, UnitStatus status,
                         const std::vector<UnitKey>& keys, bool more) {
  const Place p{place.node, place.drive};
  auto it = pending_.find(p);
  if (it == pending_.end()) return;  // not asked (or already finished): ignored
  const UnitKey from = it->second;
  if (status != UnitStatus::Ok) {
    ++progress_.drives_skipped;
    pending_.erase(it);
  } else {
    SweepAction drop;
    drop.kind = SweepAction::Kind::Drop;
    drop.place = place;
    const UnitKey* last = nullptr;
    bool ordered = true;
    for (const UnitKey& k : keys) {
      // A page out of order or before its start is not trusted: nothing of it is dropped.
      if (k < from || (last && !(*last < k))) ordered = false;
      last = &k;
    }
    if (!ordered || keys.size() > kMaxListKeys) {
      ++progress_.drives_skipped;
      pending_.erase(it);
    } else {
      for (const UnitKey& k : keys) {
        ++progress_.units_seen;
        if (k.file == kMetadataFileId || referenced_.count({p, k})) {
          ++progress_.units_referenced;
        } else if (!version_settled(fence_, k.version)) {
          ++progress_.units_young;
        } else {
          drop.keys.push_back(k);
        }
      }
      progress_.units_dropped += drop.keys.size();
      if (!drop.keys.empty()) actions_.push_back(std::move(drop));
      if (more && !keys.empty()) {
        SweepAction next;
        next.kind = SweepAction::Kind::List;
        next.place = place;
        next.from = next_key(keys.back());
        it->second = next.from;
        actions_.push_back(std::move(next));
      } else {
        ++progress_.drives_listed;
        pending_.erase(it);
      }
    }
  }
  if (pending_.empty()) {
    progress_.running = false;
    ++progress_.sweeps;
  }
}

}  // namespace nasd::scaleout
