#include "server/nlm/lock_manager.h"

#include <algorithm>

namespace nasd::nlm {
namespace {

size_t size_of(const std::vector<Lock>& l, const std::deque<Waiter>& w,
               const std::vector<Share>& s) {
  return l.size() + w.size() + s.size();
}

bool same_request(const Lock& a, const Lock& b) {
  return a.file == b.file && a.owner == b.owner && a.exclusive == b.exclusive && a.range == b.range;
}

bool shares_conflict(const Share& a, const Share& b) {
  auto acc = [](ShareAccess x) { return static_cast<uint32_t>(x); };
  auto deny = [](ShareDeny x) { return static_cast<uint32_t>(x); };
  return (acc(a.access) & deny(b.deny)) != 0 || (deny(a.deny) & acc(b.access)) != 0;
}

}  // namespace

ByteRange ByteRange::from_nlm(uint64_t offset, uint64_t len) {
  ByteRange r;
  r.start = offset;
  // len 0, or offset + len past 2^64 - 1: to the end of the file.
  r.end = (len == 0 || len > kToEof - offset) ? kToEof : offset + len;
  return r;
}

const Lock* LockManager::find_conflict(const FileState& state, const Lock& lock) {
  // Cheap tests first: most locks on a busy file are elsewhere in it.
  for (const Lock& held : state.locks) {
    if (!held.range.overlaps(lock.range)) continue;
    if (!held.exclusive && !lock.exclusive) continue;
    if (held.owner == lock.owner) continue;
    return &held;
  }
  return nullptr;
}

LockStatus LockManager::test(const Lock& probe, uint64_t now_ms,
                             std::optional<Lock>* conflicting) const {
  conflicting->reset();
  if (away_.count(probe.file.volume) || in_grace(probe.file.volume, now_ms))
    return LockStatus::DeniedGrace;
  auto it = files_.find(probe.file);
  if (it == files_.end()) return LockStatus::Granted;
  if (const Lock* c = find_conflict(it->second, probe)) {
    *conflicting = *c;
    return LockStatus::Denied;
  }
  return LockStatus::Granted;
}

LockStatus LockManager::lock(const LockRequest& request, uint64_t now_ms) {
  const Lock& want = request.lock;
  if (want.range.empty()) return LockStatus::Denied;
  if (away_.count(want.file.volume)) return LockStatus::DeniedGrace;  // moving: ask again
  // Only reclaims in the grace period, and reclaims only then: a reclaim that comes later may
  // be of a lock another client has been granted since, and must not take it back.
  if (request.reclaim != in_grace(want.file.volume, now_ms)) return LockStatus::DeniedGrace;
  FileState& state = files_[want.file];
  size_t before = size_of(state.locks, state.waiters, state.shares);
  LockStatus result;
  auto queued = std::find_if(state.waiters.begin(), state.waiters.end(),
                             [&](const Waiter& w) { return same_request(w.lock, want); });
  if (!find_conflict(state, want)) {
    // A lock adds at most two entries (a split); refuse before growing past the bound.
    if (entries_ + 2 > max_entries_) {
      result = LockStatus::NoLocks;
    } else {
      if (queued != state.waiters.end()) state.waiters.erase(queued);
      apply(state, want);
      result = LockStatus::Granted;
    }
  } else if (!request.block) {
    result = LockStatus::Denied;
  } else if (queued != state.waiters.end()) {
    queued->fh = request.fh;
    queued->cookie = request.cookie;  // a retransmission: same place, latest cookie
    queued->callback = request.callback;
    result = LockStatus::Blocked;
  } else if (entries_ + 1 > max_entries_) {
    result = LockStatus::NoLocks;
  } else {
    state.waiters.push_back(Waiter{want, request.fh, request.cookie, request.callback});
    result = LockStatus::Blocked;
  }
  entries_ = entries_ + size_of(state.locks, state.waiters, state.shares) - before;
  forget_if_empty(want.file);
  return result;
}

void LockManager::remove_range(FileState& state, const LockOwner& owner, const ByteRange& range) {
  // Rebuild the list only when the owner holds something in the range.
  bool touched = std::any_of(state.locks.begin(), state.locks.end(), [&](const Lock& held) {
    return held.range.overlaps(range) && held.owner == owner;
  });
  if (!touched) return;
  std::vector<Lock> kept;
  kept.reserve(state.locks.size() + 1);
  for (Lock& held : state.locks) {
    if (held.owner != owner || !held.range.overlaps(range)) {
      kept.push_back(std::move(held));
      continue;
    }
    // Keep what lies outside `range`: a part before it, a part after it, or both (a split).
    if (held.range.start < range.start) {
      Lock before = held;
      before.range.end = range.start;
      kept.push_back(std::move(before));
    }
    if (range.end < held.range.end) {
      Lock after = held;
      after.range.start = range.end;
      kept.push_back(std::move(after));
    }
  }
  state.locks = std::move(kept);
}

void LockManager::apply(FileState& state, const Lock& lock) {
  remove_range(state, lock.owner, lock.range);
  Lock merged = lock;
  auto touches = [&](const Lock& held) {
    return held.range.start <= merged.range.end && merged.range.start <= held.range.end &&
           held.exclusive == lock.exclusive && held.owner == lock.owner;
  };
  if (std::none_of(state.locks.begin(), state.locks.end(), touches)) {
    state.locks.push_back(std::move(merged));
    return;
  }
  // Absorb the owner's locks of the same mode that touch or overlap the new one.
  std::vector<Lock> kept;
  kept.reserve(state.locks.size() + 1);
  for (Lock& held : state.locks) {
    bool joins = held.range.start <= merged.range.end && merged.range.start <= held.range.end &&
                 held.owner == lock.owner && held.exclusive == lock.exclusive;
    if (joins) {
      merged.range.start = std::min(merged.range.start, held.range.start);
      merged.range.end = std::max(merged.range.end, held.range.end);
    } else {
      kept.push_back(std::move(held));
    }
  }
  kept.push_back(std::move(merged));
  state.locks = std::move(kept);
}

std::vector<Waiter> LockManager::wake(FileState& state) {
  std::vector<Waiter> granted;
  for (auto it = state.waiters.begin(); it != state.waiters.end();) {
    if (find_conflict(state, it->lock)) {
      ++it;
      continue;
    }
    apply(state, it->lock);
    granted.push_back(std::move(*it));
    it = state.waiters.erase(it);
  }
  return granted;
}

std::vector<Waiter> LockManager::unlock(const FileId& file, const LockOwner& owner,
                                        const ByteRange& range) {
  auto it = files_.find(file);
  if (it == files_.end()) return {};
  FileState& state = it->second;
  size_t before = size_of(state.locks, state.waiters, state.shares);
  remove_range(state, owner, range);
  std::vector<Waiter> granted = wake(state);
  entries_ = entries_ + size_of(state.locks, state.waiters, state.shares) - before;
  forget_if_empty(file);
  return granted;
}

bool LockManager::cancel(const Lock& waiting) {
  auto it = files_.find(waiting.file);
  if (it == files_.end()) return false;
  auto& waiters = it->second.waiters;
  auto w = std::find_if(waiters.begin(), waiters.end(),
                        [&](const Waiter& x) { return same_request(x.lock, waiting); });
  if (w == waiters.end()) return false;
  waiters.erase(w);
  entries_--;
  forget_if_empty(waiting.file);
  return true;
}

LockStatus LockManager::share(const Share& share, bool reclaim, uint64_t now_ms) {
  if (away_.count(share.file.volume)) return LockStatus::DeniedGrace;
  if (reclaim != in_grace(share.file.volume, now_ms)) return LockStatus::DeniedGrace;
  FileState& state = files_[share.file];
  size_t before = size_of(state.locks, state.waiters, state.shares);
  auto mine = [&](const Share& s) { return s.host == share.host && s.oh == share.oh; };
  LockStatus result = LockStatus::Granted;
  for (const Share& other : state.shares)
    if (!mine(other) && shares_conflict(share, other)) result = LockStatus::Denied;
  if (result == LockStatus::Granted) {
    auto existing = std::find_if(state.shares.begin(), state.shares.end(), mine);
    if (existing != state.shares.end()) {
      *existing = share;
    } else if (entries_ + 1 > max_entries_) {
      result = LockStatus::NoLocks;
    } else {
      state.shares.push_back(share);
    }
  }
  entries_ = entries_ + size_of(state.locks, state.waiters, state.shares) - before;
  forget_if_empty(share.file);
  return result;
}

void LockManager::unshare(const FileId& file, const std::string& host, const std::string& oh) {
  auto it = files_.find(file);
  if (it == files_.end()) return;
  auto& shares = it->second.shares;
  size_t before = shares.size();
  std::erase_if(shares, [&](const Share& s) { return s.host == host && s.oh == oh; });
  entries_ -= before - shares.size();
  forget_if_empty(file);
}

std::vector<Waiter> LockManager::free_all(const std::string& host) {
  std::vector<Waiter> granted;
  for (auto it = files_.begin(); it != files_.end();) {
    FileState& state = it->second;
    size_t before = size_of(state.locks, state.waiters, state.shares);
    std::erase_if(state.locks, [&](const Lock& l) { return l.owner.host == host; });
    std::erase_if(state.waiters, [&](const Waiter& w) { return w.lock.owner.host == host; });
    std::erase_if(state.shares, [&](const Share& s) { return s.host == host; });
    for (Waiter& w : wake(state)) granted.push_back(std::move(w));
    entries_ = entries_ + size_of(state.locks, state.waiters, state.shares) - before;
    it = state.empty() ? files_.erase(it) : std::next(it);
  }
  return granted;
}

void LockManager::drop_volume(uint32_t volume) {
  away_.insert(volume);
  volume_grace_until_.erase(volume);
  for (auto it = files_.begin(); it != files_.end();) {
    if (it->first.volume != volume) {
      ++it;
      continue;
    }
    entries_ -= size_of(it->second.locks, it->second.waiters, it->second.shares);
    it = files_.erase(it);
  }
}

void LockManager::begin_grace(uint64_t until_ms) { grace_until_ = std::max(grace_until_, until_ms); }

VolumeLocks LockManager::take_volume(uint32_t volume, uint64_t now_ms) {
  VolumeLocks out;
  auto grace = volume_grace_until_.find(volume);
  if (grace != volume_grace_until_.end() && now_ms < grace->second)
    out.grace_left_ms = grace->second - now_ms;
  for (const auto& [file, state] : files_) {
    if (file.volume != volume) continue;
    out.locks.insert(out.locks.end(), state.locks.begin(), state.locks.end());
    out.waiters.insert(out.waiters.end(), state.waiters.begin(), state.waiters.end());
    out.shares.insert(out.shares.end(), state.shares.begin(), state.shares.end());
  }
  drop_volume(volume);
  return out;
}

bool LockManager::adopt_volume(uint32_t volume, const VolumeLocks& table, uint64_t now_ms) {
  if (entries_ + table.entries() > max_entries_) return false;
  // Built apart and checked whole, so that a bad table changes nothing.
  std::map<FileId, FileState> adopted;
  for (const Lock& l : table.locks) {
    if (l.file.volume != volume || l.range.empty()) return false;
    FileState& state = adopted[l.file];
    if (find_conflict(state, l)) return false;
    for (const Lock& held : state.locks)
      if (held.owner == l.owner && held.range.overlaps(l.range)) return false;
    state.locks.push_back(l);
  }
  for (const Waiter& w : table.waiters) {
    if (w.lock.file.volume != volume || w.lock.range.empty()) return false;
    FileState& state = adopted[w.lock.file];
    for (const Waiter& other : state.waiters)
      if (same_request(other.lock, w.lock)) return false;
    state.waiters.push_back(w);
  }
  for (const Share& s : table.shares) {
    if (s.file.volume != volume) return false;
    FileState& state = adopted[s.file];
    for (const Share& other : state.shares) {
      if (other.host == s.host && other.oh == s.oh) return false;
      if (shares_conflict(s, other)) return false;
    }
    state.shares.push_back(s);
  }
  // What is still here of the volume (nothing, unless it never left) stays; the table's files
  // must not meet it.
  for (const auto& [file, state] : adopted)
    if (files_.count(file)) return false;
  for (auto& [file, state] : adopted) files_[file] = std::move(state);
  entries_ += table.entries();
  away_.erase(volume);
  volume_grace_until_.erase(volume);
  if (table.grace_left_ms > 0) volume_grace_until_[volume] = now_ms + table.grace_left_ms;
  return true;
}

void LockManager::begin_volume_grace(uint32_t volume, uint64_t until_ms) {
  away_.erase(volume);
  uint64_t& until = volume_grace_until_[volume];
  until = std::max(until, until_ms);
}

bool LockManager::in_grace(uint32_t volume, uint64_t now_ms) const {
  if (now_ms < grace_until_) return true;
  auto it = volume_grace_until_.find(volume);
  return it != volume_grace_until_.end() && now_ms < it->second;
}

std::map<uint32_t, uint64_t> LockManager::volume_graces(uint64_t now_ms) const {
  std::map<uint32_t, uint64_t> out;
  for (const auto& [volume, until] : volume_grace_until_)
    if (now_ms < until) out[volume] = until;
  return out;
}

void LockManager::forget_if_empty(const FileId& file) {
  auto it = files_.find(file);
  if (it != files_.end() && it->second.empty()) files_.erase(it);
}

std::vector<Lock> LockManager::locks() const {
  std::vector<Lock> out;
  for (const auto& [file, state] : files_) out.insert(out.end(), state.locks.begin(), state.locks.end());
  return out;
}

std::vector<Waiter> LockManager::waiters() const {
  std::vector<Waiter> out;
  for (const auto& [file, state] : files_)
    out.insert(out.end(), state.waiters.begin(), state.waiters.end());
  return out;
}

std::vector<Share> LockManager::shares() const {
  std::vector<Share> out;
  for (const auto& [file, state] : files_)
    out.insert(out.end(), state.shares.begin(), state.shares.end());
  return out;
}

}  // namespace nasd::nlm
