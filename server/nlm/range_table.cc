#include "server/nlm/range_table.h"

#include <algorithm>
#include <iterator>

namespace nasd::nlm {

const Lock* RangeTable::covering(const LockOwner& owner, uint64_t at) const {
  auto mine = by_owner_.find(owner);
  if (mine == by_owner_.end()) return nullptr;
  auto it = mine->second.upper_bound(at);
  if (it == mine->second.begin()) return nullptr;
  --it;
  work_++;
  return it->second.range.end > at ? &it->second : nullptr;
}

const Lock* RangeTable::conflict(const Lock& lock) const { return find_conflict(lock, true); }

bool RangeTable::conflicts(const Lock& lock) const { return find_conflict(lock, false) != nullptr; }

const Lock* RangeTable::find_conflict(const Lock& lock, bool holder) const {
  const ByteRange& r = lock.range;
  // Exclusive locks are disjoint: those meeting `r` are a run from the predecessor of its start.
  auto ex = exclusive_.upper_bound(r.start);
  if (ex != exclusive_.begin()) --ex;
  for (; ex != exclusive_.end() && ex->first < r.end; ++ex) {
    work_++;
    const Lock& held = by_owner_.at(*ex->second).at(ex->first);
    if (held.range.overlaps(r) && held.owner != lock.owner) return &held;
  }
  if (!lock.exclusive) return nullptr;  // shared meets shared: no conflict
  // Another owner's shared lock where the coverage is more than the requester's own. A segment
  // has one coverage but not one set of coverers (equal neighbours are merged), so within a
  // segment covered once, the requester's own lock may cover only a part of it.
  auto seg = shared_cover_.upper_bound(r.start);
  if (seg != shared_cover_.begin()) --seg;
  for (; seg != shared_cover_.end() && seg->first < r.end; ++seg) {
    work_++;
    if (seg->second == 0) continue;
    auto next = std::next(seg);
    const uint64_t lo = std::max(seg->first, r.start);
    const uint64_t hi = std::min(next == shared_cover_.end() ? ByteRange::kToEof : next->first, r.end);
    uint64_t at = lo;
    if (seg->second == 1) {
      // Past the requester's own shared lock at `lo`, if any: beyond it (its adjacent locks
      // of the same mode are merged into it) the one coverer is someone else.
      if (const Lock* own = covering(lock.owner, lo); own && !own->exclusive) at = own->range.end;
      if (at >= hi) continue;
    }
    if (!holder) return &lock;  // some other owner's shared lock covers `at`
    // Which one: looked for among the file's owners (only for TEST's answer).
    for (const auto& [owner, locks] : by_owner_) {
      if (owner == lock.owner) continue;
      if (const Lock* held = covering(owner, at); held && !held->exclusive) return held;
    }
  }
  return nullptr;
}

bool RangeTable::owner_overlaps(const Lock& lock) const {
  auto mine = by_owner_.find(lock.owner);
  if (mine == by_owner_.end()) return false;
  auto it = mine->second.upper_bound(lock.range.start);
  if (it != mine->second.begin() && std::prev(it)->second.range.end > lock.range.start) return true;
  return it != mine->second.end() && it->first < lock.range.end;
}

void RangeTable::cover(const ByteRange& range, int delta) {
  // A boundary at `at` with the coverage of the segment it splits (0 before the first).
  auto split = [&](uint64_t at) {
    if (at == ByteRange::kToEof) return;
    auto next = shared_cover_.upper_bound(at);
    if (next != shared_cover_.begin() && std::prev(next)->first == at) return;
    uint32_t count = next == shared_cover_.begin() ? 0 : std::prev(next)->second;
    shared_cover_.emplace_hint(next, at, count);
  };
  split(range.start);
  split(range.end);
  for (auto it = shared_cover_.find(range.start); it != shared_cover_.end() && it->first < range.end; ++it) {
    work_++;
    it->second = static_cast<uint32_t>(static_cast<int64_t>(it->second) + delta);
  }
  // Only the two ends can have become boundaries between equal coverages.
  for (uint64_t at : {range.start, range.end}) {
    auto it = shared_cover_.find(at);
    if (it == shared_cover_.end()) continue;
    uint32_t before = it == shared_cover_.begin() ? 0 : std::prev(it)->second;
    if (it->second == before) shared_cover_.erase(it);
  }
}

void RangeTable::insert(const Lock& lock) {
  auto mine = by_owner_.try_emplace(lock.owner).first;
  mine->second.emplace(lock.range.start, lock);
  if (lock.exclusive) exclusive_.emplace(lock.range.start, &mine->first);
  else cover(lock.range, +1);
  size_++;
}

void RangeTable::erase(const Lock& lock) {
  auto mine = by_owner_.find(lock.owner);
  if (mine == by_owner_.end() || !mine->second.erase(lock.range.start)) return;
  if (lock.exclusive) exclusive_.erase(lock.range.start);
  else cover(lock.range, -1);
  if (mine->second.empty()) by_owner_.erase(mine);
  size_--;
}

bool RangeTable::remove_range(const LockOwner& owner, const ByteRange& range, Changes* changes) {
  auto mine = by_owner_.find(owner);
  if (mine == by_owner_.end()) return false;
  std::vector<Lock> hit;
  auto it = mine->second.upper_bound(range.start);
  if (it != mine->second.begin() && std::prev(it)->second.range.end > range.start) --it;
  for (; it != mine->second.end() && it->first < range.end; ++it) {
    work_++;
    hit.push_back(it->second);
  }
  if (hit.empty()) return false;
  for (const Lock& held : hit) {
    erase(held);
    changes->removed.push_back(held);
    // Keep what lies outside `range`: a part before it, a part after it, or both (a split).
    if (held.range.start < range.start) {
      Lock before = held;
      before.range.end = range.start;
      insert(before);
      changes->added.push_back(std::move(before));
    }
    if (range.end < held.range.end) {
      Lock after = held;
      after.range.start = range.end;
      insert(after);
      changes->added.push_back(std::move(after));
    }
  }
  return true;
}

void RangeTable::apply(const Lock& lock, Changes* changes) {
  remove_range(lock.owner, lock.range, changes);
  Lock merged = lock;
  // The owner's locks no longer overlap it; only those touching it (same mode) merge.
  if (const Lock* before = merged.range.start > 0 ? covering(lock.owner, merged.range.start - 1) : nullptr;
      before && before->exclusive == lock.exclusive && before->range.end == merged.range.start) {
    Lock gone = *before;
    merged.range.start = gone.range.start;
    erase(gone);
    changes->removed.push_back(std::move(gone));
  }
  if (merged.range.end != ByteRange::kToEof) {
    if (const Lock* after = covering(lock.owner, merged.range.end);
        after && after->exclusive == lock.exclusive && after->range.start == merged.range.end) {
      Lock gone = *after;
      merged.range.end = gone.range.end;
      erase(gone);
      changes->removed.push_back(std::move(gone));
    }
  }
  insert(merged);
  changes->added.push_back(std::move(merged));
}

void RangeTable::remove_client(const ClientKey& client, Changes* changes,
                               std::vector<ByteRange>* freed) {
  std::vector<Lock> gone;
  for (const auto& [owner, locks] : by_owner_) {
    if (owner.address != client.address || owner.host != client.host) continue;
    for (const auto& [start, held] : locks) gone.push_back(held);
  }
  for (Lock& held : gone) {
    erase(held);
    freed->push_back(held.range);
    changes->removed.push_back(std::move(held));
  }
}

void RangeTable::append_to(std::vector<Lock>* out) const {
  for (const auto& [owner, locks] : by_owner_)
    for (const auto& [start, held] : locks) out->push_back(held);
}

}  // namespace nasd::nlm
