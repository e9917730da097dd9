// One file's granted byte-range locks, indexed so that a call costs O(log n + the locks it
// meets) rather than a scan of the file's table (which let one client's thousands of locks
// hold every other client's call on the file up under the lock table's mutex).
//
// The index rests on two facts of a table without conflicts: one owner's locks never overlap
// each other (a new lock replaces what the owner held there), and an exclusive lock overlaps no
// other lock at all. So:
// - each owner's locks are kept by start (`by_owner_`): its unlock, upgrade or merge touches
//   only its own neighbourhood;
// - every exclusive lock is kept by start (`exclusive_`): they are disjoint, so those meeting a
//   range are a run found from the predecessor of its start;
// - shared locks may overlap each other, so for them a coverage map is kept (`shared_cover_`:
//   from each boundary to the next, how many shared locks cover it). An exclusive request
//   conflicts with another owner's shared lock where the coverage is more than the requester's
//   own (0 or 1: its locks are disjoint).
// A pure data structure; LockManager keeps one per file and the invariant (no conflicting locks
// of different owners) that the index relies on.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "server/nlm/lock_types.h"

namespace nasd::nlm {

class RangeTable {
 public:
  // What a change did, entry by entry, for the caller's accounting.
  struct Changes {
    std::vector<Lock> added, removed;
  };

  RangeTable() = default;
  RangeTable(const RangeTable&) = delete;  // exclusive_ points into by_owner_
  RangeTable& operator=(const RangeTable&) = delete;
  RangeTable(RangeTable&&) = default;
  RangeTable& operator=(RangeTable&&) = default;

  // Whether a lock of another owner conflicts with `lock` (overlaps it, either exclusive):
  // O(log n + the locks and coverage segments in its range).
  bool conflicts(const Lock& lock) const;
  // The same, with the conflicting lock (nullptr when none), for TEST's answer: when that is a
  // shared lock, it is looked for among the file's owners (O(owners · log n), once per call).
  const Lock* conflict(const Lock& lock) const;
  // Whether the owner of `lock` holds anything overlapping its range.
  bool owner_overlaps(const Lock& lock) const;
  // Removes the owner's locks inside `range`, keeping what lies outside it (a split). False
  // when the owner held nothing there.
  bool remove_range(const LockOwner& owner, const ByteRange& range, Changes* changes);
  // Sets the owner's mode on `lock.range` (replacing what it held there) and merges it with the
  // owner's adjacent locks of the same mode. The caller has checked conflict().
  void apply(const Lock& lock, Changes* changes);
  // Removes every lock of `client` (all its owners); their ranges go to *freed.
  void remove_client(const ClientKey& client, Changes* changes, std::vector<ByteRange>* freed);
  // Adds a lock as it is (a table being adopted, checked by the caller).
  void insert(const Lock& lock);

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void append_to(std::vector<Lock>* out) const;
  // Locks and coverage segments looked at so far (for tests of the cost of a call).
  uint64_t work() const { return work_; }

 private:
  using OwnerLocks = std::map<uint64_t, Lock>;  // by start
  // conflict() when `holder`, else conflicts() (any non-null pointer).
  const Lock* find_conflict(const Lock& lock, bool holder) const;
  void erase(const Lock& lock);
  // Adds `delta` to the shared coverage of `range`.
  void cover(const ByteRange& range, int delta);
  // The owner's lock covering byte `at`, or nullptr.
  const Lock* covering(const LockOwner& owner, uint64_t at) const;

  std::map<LockOwner, OwnerLocks> by_owner_;
  std::map<uint64_t, const LockOwner*> exclusive_;  // by start; the owner key in by_owner_
  std::map<uint64_t, uint32_t> shared_cover_;       // boundary -> shared locks from it on
  size_t size_ = 0;
  mutable uint64_t work_ = 0;
};

}  // namespace nasd::nlm
