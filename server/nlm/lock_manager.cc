#include "server/nlm/lock_manager.h"

#include <algorithm>

namespace nasd::nlm {
namespace {

bool same_request(const Lock& a, const Lock& b) {
  return a.file == b.file && a.owner == b.owner && a.exclusive == b.exclusive && a.range == b.range;
}

bool shares_conflict(const Share& a, const Share& b) {
  auto acc = [](ShareAccess x) { return static_cast<uint32_t>(x); };
  auto deny = [](ShareDeny x) { return static_cast<uint32_t>(x); };
  return (acc(a.access) & deny(b.deny)) != 0 || (deny(a.deny) & acc(b.access)) != 0;
}

// What an entry costs, for the byte quotas: the record and the strings it carries.
size_t bytes_of(const Lock& l) {
  return sizeof(Lock) + l.owner.host.size() + l.owner.oh.size() + l.owner.address.size();
}
size_t bytes_of(const Waiter& w) {
  return sizeof(Waiter) + bytes_of(w.lock) + w.fh.size() + w.cookie.size() + w.callback.host.size() +
         w.callback.from.size() + w.callback.relay.size();
}
size_t bytes_of(const Share& s) {
  return sizeof(Share) + s.host.size() + s.oh.size() + s.address.size();
}

ClientKey key_of(const LockOwner& o) { return ClientKey{o.address, o.host}; }
ClientKey key_of(const Share& s) { return ClientKey{s.address, s.host}; }

bool meets_any(const ByteRange& r, const std::vector<ByteRange>& freed) {
  return std::any_of(freed.begin(), freed.end(), [&](const ByteRange& f) { return f.overlaps(r); });
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
  auto it = files_.try_emplace(want.file).first;
  FileState& state = it->second;
  LockStatus result;
  auto queued = std::find_if(state.waiters.begin(), state.waiters.end(),
                             [&](const Waiter& w) { return same_request(w.lock, want); });
  if (!find_conflict(state, want)) {
    // A lock adds at most two entries (a split); refuse before growing past a bound.
    if (!fits(state, want.owner.address, 2, 2 * bytes_of(want))) {
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
  } else {
    Waiter w{want, request.fh, request.cookie, request.callback};
    if (!fits(state, want.owner.address, 1, bytes_of(w))) {
      result = LockStatus::NoLocks;
    } else {
      state.waiters.push_back(std::move(w));
      result = LockStatus::Blocked;
    }
  }
  recount(it);
  return result;
}

bool LockManager::fits(const FileState& state, const std::string& address, size_t more,
                       size_t bytes) const {
  Usage mine;
  if (auto a = by_address_.find(address); a != by_address_.end()) mine = a->second;
  return entries_ + more <= limits_.max_entries &&
         state.total.entries + more <= limits_.max_entries_per_file &&
         state.total.bytes + bytes <= limits_.max_bytes_per_file &&
         mine.entries + more <= limits_.max_entries_per_address &&
         mine.bytes + bytes <= limits_.max_bytes_per_address;
}

void LockManager::uncount(const FileId& file, const FileState& state) {
  entries_ -= state.total.entries;
  for (const auto& [client, use] : state.by_client) {
    auto a = by_address_.find(client.address);
    a->second.entries -= use.entries;
    a->second.bytes -= use.bytes;
    if (a->second.entries == 0) by_address_.erase(a);
    auto c = client_files_.find(client);
    c->second.erase(file);
    if (c->second.empty()) client_files_.erase(c);
  }
}

void LockManager::recount(std::map<FileId, FileState>::iterator it) {
  const FileId& file = it->first;
  FileState& state = it->second;
  uncount(file, state);
  state.by_client.clear();
  state.total = Usage{};
  auto add = [&](const ClientKey& client, size_t bytes) {
    Usage& u = state.by_client[client];
    u.entries++;
    u.bytes += bytes;
    state.total.entries++;
    state.total.bytes += bytes;
  };
  for (const Lock& l : state.locks) add(key_of(l.owner), bytes_of(l));
  for (const Waiter& w : state.waiters) add(key_of(w.lock.owner), bytes_of(w));
  for (const Share& s : state.shares) add(key_of(s), bytes_of(s));
  entries_ += state.total.entries;
  for (const auto& [client, use] : state.by_client) {
    Usage& a = by_address_[client.address];
    a.entries += use.entries;
    a.bytes += use.bytes;
    client_files_[client][file] = use.entries;
  }
  if (state.empty()) files_.erase(it);
}

bool LockManager::holds(const ClientKey& client, uint32_t volume) const {
  auto c = client_files_.find(client);
  if (c == client_files_.end()) return false;
  auto f = c->second.lower_bound(FileId{volume, 0, 0});
  return f != c->second.end() && f->first.volume == volume;
}

bool LockManager::remove_range(FileState& state, const LockOwner& owner, const ByteRange& range) {
  // Rebuild the list only when the owner holds something in the range.
  bool touched = std::any_of(state.locks.begin(), state.locks.end(), [&](const Lock& held) {
    return held.range.overlaps(range) && held.owner == owner;
  });
  if (!touched) return false;
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
  return true;
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

std::vector<Waiter> LockManager::wake(FileState& state, const std::vector<ByteRange>& freed) {
  std::vector<Waiter> granted;
  if (freed.empty()) return granted;
  // A waiter that meets no freed range is still blocked by what blocked it (granting others
  // frees nothing), so it is not looked at: an unlock costs its neighbourhood, not the file.
  for (auto it = state.waiters.begin(); it != state.waiters.end();) {
    if (!meets_any(it->lock.range, freed) || find_conflict(state, it->lock)) {
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
  if (!remove_range(it->second, owner, range)) return {};  // nothing held there: nothing freed
  std::vector<Waiter> granted = wake(it->second, {range});
  recount(it);
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
  recount(it);
  return true;
}

LockStatus LockManager::share(const Share& share, bool reclaim, uint64_t now_ms) {
  if (away_.count(share.file.volume)) return LockStatus::DeniedGrace;
  if (reclaim != in_grace(share.file.volume, now_ms)) return LockStatus::DeniedGrace;
  auto it = files_.try_emplace(share.file).first;
  FileState& state = it->second;
  auto mine = [&](const Share& s) {
    return s.host == share.host && s.oh == share.oh && s.address == share.address;
  };
  LockStatus result = LockStatus::Granted;
  for (const Share& other : state.shares)
    if (!mine(other) && shares_conflict(share, other)) result = LockStatus::Denied;
  if (result == LockStatus::Granted) {
    auto existing = std::find_if(state.shares.begin(), state.shares.end(), mine);
    if (existing != state.shares.end()) {
      *existing = share;
    } else if (!fits(state, share.address, 1, bytes_of(share))) {
      result = LockStatus::NoLocks;
    } else {
      state.shares.push_back(share);
    }
  }
  recount(it);
  return result;
}

void LockManager::unshare(const FileId& file, const std::string& host, const std::string& oh,
                          const std::string& address) {
  auto it = files_.find(file);
  if (it == files_.end()) return;
  auto& shares = it->second.shares;
  size_t before = shares.size();
  std::erase_if(shares,
                [&](const Share& s) { return s.host == host && s.oh == oh && s.address == address; });
  if (shares.size() != before) recount(it);
}

std::vector<Waiter> LockManager::free_all(const ClientKey& client) {
  std::vector<Waiter> granted;
  auto c = client_files_.find(client);
  if (c == client_files_.end()) return granted;
  std::vector<FileId> files;
  for (const auto& [file, count] : c->second) files.push_back(file);
  for (const FileId& file : files) {
    auto it = files_.find(file);
    if (it == files_.end()) continue;
    FileState& state = it->second;
    std::vector<ByteRange> freed;
    std::erase_if(state.locks, [&](const Lock& l) {
      if (key_of(l.owner) != client) return false;
      freed.push_back(l.range);
      return true;
    });
    std::erase_if(state.waiters, [&](const Waiter& w) { return key_of(w.lock.owner) == client; });
    std::erase_if(state.shares, [&](const Share& s) { return key_of(s) == client; });
    for (Waiter& w : wake(state, freed)) granted.push_back(std::move(w));
    recount(it);
  }
  return granted;
}

void LockManager::drop_volume(uint32_t volume) {
  away_.insert(volume);
  volume_grace_until_.erase(volume);
  for (auto it = files_.lower_bound(FileId{volume, 0, 0});
       it != files_.end() && it->first.volume == volume;) {
    uncount(it->first, it->second);
    it = files_.erase(it);
  }
}

void LockManager::begin_grace(uint64_t until_ms) { grace_until_ = std::max(grace_until_, until_ms); }

VolumeLocks LockManager::take_volume(uint32_t volume, uint64_t now_ms) {
  VolumeLocks out;
  auto grace = volume_grace_until_.find(volume);
  if (grace != volume_grace_until_.end() && now_ms < grace->second)
    out.grace_left_ms = grace->second - now_ms;
  for (auto it = files_.lower_bound(FileId{volume, 0, 0});
       it != files_.end() && it->first.volume == volume; ++it) {
    const FileState& state = it->second;
    out.locks.insert(out.locks.end(), state.locks.begin(), state.locks.end());
    out.waiters.insert(out.waiters.end(), state.waiters.begin(), state.waiters.end());
    out.shares.insert(out.shares.end(), state.shares.begin(), state.shares.end());
  }
  drop_volume(volume);
  return out;
}

bool LockManager::adopt_volume(uint32_t volume, const VolumeLocks& table, uint64_t now_ms) {
  if (entries_ + table.entries() > limits_.max_entries) return false;
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
      if (other.host == s.host && other.oh == s.oh && other.address == s.address) return false;
      if (shares_conflict(s, other)) return false;
    }
    state.shares.push_back(s);
  }
  // What is still here of the volume (nothing, unless it never left) stays; the table's files
  // must not meet it.
  for (const auto& [file, state] : adopted)
    if (files_.count(file)) return false;
  for (auto& [file, state] : adopted) recount(files_.emplace(file, std::move(state)).first);
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
