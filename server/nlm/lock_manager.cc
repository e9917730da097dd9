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

LockStatus LockManager::test(const Lock& probe, uint64_t now_ms,
                             std::optional<Lock>* conflicting) const {
  conflicting->reset();
  if (away_.count(probe.file.volume) || in_grace(probe.file.volume, now_ms))
    return LockStatus::DeniedGrace;
  auto it = files_.find(probe.file);
  if (it == files_.end()) return LockStatus::Granted;
  if (const Lock* c = it->second.locks.conflict(probe)) {
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
  const ClientKey client = key_of(want.owner);
  LockStatus result;
  auto queued = std::find_if(state.waiters.begin(), state.waiters.end(),
                             [&](const Waiter& w) { return same_request(w.lock, want); });
  if (!state.locks.conflicts(want)) {
    // A lock adds at most two entries (a split); refuse before growing past a bound.
    if (!fits(state, want.owner.address, 2, 2 * bytes_of(want))) {
      result = LockStatus::NoLocks;
    } else {
      if (queued != state.waiters.end()) {
        count(want.file, state, client, bytes_of(*queued), -1);
        state.waiters.erase(queued);
      }
      apply(want.file, state, want);
      result = LockStatus::Granted;
    }
  } else if (!request.block) {
    result = LockStatus::Denied;
  } else if (queued != state.waiters.end()) {
    count(want.file, state, client, bytes_of(*queued), -1);
    queued->fh = request.fh;
    queued->cookie = request.cookie;  // a retransmission: same place, latest cookie
    queued->callback = request.callback;
    count(want.file, state, client, bytes_of(*queued), +1);
    result = LockStatus::Blocked;
  } else {
    Waiter w{want, request.fh, request.cookie, request.callback};
    if (!fits(state, want.owner.address, 1, bytes_of(w))) {
      result = LockStatus::NoLocks;
    } else {
      count(want.file, state, client, bytes_of(w), +1);
      state.waiters.push_back(std::move(w));
      result = LockStatus::Blocked;
    }
  }
  forget_if_empty(it);
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

void LockManager::count(const FileId& file, FileState& state, const ClientKey& client,
                        size_t bytes, int sign) {
  auto apply_to = [&](Usage& u) {
    if (sign > 0) {
      u.entries++;
      u.bytes += bytes;
    } else {
      u.entries--;
      u.bytes -= bytes;
    }
  };
  apply_to(state.total);
  auto c = state.by_client.try_emplace(client).first;
  apply_to(c->second);
  if (c->second.entries == 0) state.by_client.erase(c);
  auto a = by_address_.try_emplace(client.address).first;
  apply_to(a->second);
  if (a->second.entries == 0) by_address_.erase(a);
  auto files = client_files_.try_emplace(client).first;
  size_t& n = files->second[file];
  n = sign > 0 ? n + 1 : n - 1;
  if (n == 0) {
    files->second.erase(file);
    if (files->second.empty()) client_files_.erase(files);
  }
  entries_ = sign > 0 ? entries_ + 1 : entries_ - 1;
}

void LockManager::count(const FileId& file, FileState& state, const RangeTable::Changes& changes) {
  for (const Lock& l : changes.removed) count(file, state, key_of(l.owner), bytes_of(l), -1);
  for (const Lock& l : changes.added) count(file, state, key_of(l.owner), bytes_of(l), +1);
}

// A whole file's entries join (+1) or leave (-1) the node's counts; the file's own stay.
void LockManager::count_file(const FileId& file, const FileState& state, int sign) {
  for (const auto& [client, use] : state.by_client) {
    Usage& a = by_address_[client.address];
    auto files = client_files_.try_emplace(client).first;
    if (sign > 0) {
      a.entries += use.entries;
      a.bytes += use.bytes;
      files->second[file] = use.entries;
    } else {
      a.entries -= use.entries;
      a.bytes -= use.bytes;
      files->second.erase(file);
    }
    if (a.entries == 0) by_address_.erase(client.address);
    if (files->second.empty()) client_files_.erase(files);
  }
  entries_ = sign > 0 ? entries_ + state.total.entries : entries_ - state.total.entries;
}

void LockManager::forget_if_empty(std::map<FileId, FileState>::iterator it) {
  if (it->second.empty()) files_.erase(it);
}

bool LockManager::holds(const ClientKey& client, uint32_t volume) const {
  auto c = client_files_.find(client);
  if (c == client_files_.end()) return false;
  auto f = c->second.lower_bound(FileId{volume, 0, 0});
  return f != c->second.end() && f->first.volume == volume;
}

void LockManager::apply(const FileId& file, FileState& state, const Lock& lock) {
  RangeTable::Changes changes;
  state.locks.apply(lock, &changes);
  count(file, state, changes);
}

std::vector<Waiter> LockManager::wake(const FileId& file, FileState& state,
                                      const std::vector<ByteRange>& freed) {
  std::vector<Waiter> granted;
  if (freed.empty()) return granted;
  // A waiter that meets no freed range is still blocked by what blocked it (granting others
  // frees nothing), so it is not looked at: an unlock costs its neighbourhood, not the file.
  for (auto it = state.waiters.begin(); it != state.waiters.end();) {
    if (!meets_any(it->lock.range, freed) || state.locks.conflicts(it->lock)) {
      ++it;
      continue;
    }
    count(file, state, key_of(it->lock.owner), bytes_of(*it), -1);
    apply(file, state, it->lock);
    granted.push_back(std::move(*it));
    it = state.waiters.erase(it);
  }
  return granted;
}

std::vector<Waiter> LockManager::unlock(const FileId& file, const LockOwner& owner,
                                        const ByteRange& range) {
  auto it = files_.find(file);
  if (it == files_.end()) return {};
  RangeTable::Changes changes;
  if (!it->second.locks.remove_range(owner, range, &changes)) return {};  // nothing freed
  count(file, it->second, changes);
  // What was freed: the removed locks' parts inside `range` (not all of `range`, which may be
  // the whole file).
  std::vector<ByteRange> freed;
  for (const Lock& l : changes.removed)
    freed.push_back({std::max(l.range.start, range.start), std::min(l.range.end, range.end)});
  std::vector<Waiter> granted = wake(file, it->second, freed);
  forget_if_empty(it);
  return granted;
}

bool LockManager::cancel(const Lock& waiting) {
  auto it = files_.find(waiting.file);
  if (it == files_.end()) return false;
  auto& waiters = it->second.waiters;
  auto w = std::find_if(waiters.begin(), waiters.end(),
                        [&](const Waiter& x) { return same_request(x.lock, waiting); });
  if (w == waiters.end()) return false;
  count(waiting.file, it->second, key_of(w->lock.owner), bytes_of(*w), -1);
  waiters.erase(w);
  forget_if_empty(it);
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
      count(share.file, state, key_of(*existing), bytes_of(*existing), -1);
      *existing = share;
      count(share.file, state, key_of(share), bytes_of(share), +1);
    } else if (!fits(state, share.address, 1, bytes_of(share))) {
      result = LockStatus::NoLocks;
    } else {
      count(share.file, state, key_of(share), bytes_of(share), +1);
      state.shares.push_back(share);
    }
  }
  forget_if_empty(it);
  return result;
}

void LockManager::unshare(const FileId& file, const std::string& host, const std::string& oh,
                          const std::string& address) {
  auto it = files_.find(file);
  if (it == files_.end()) return;
  std::erase_if(it->second.shares, [&](const Share& s) {
    if (s.host != host || s.oh != oh || s.address != address) return false;
    count(file, it->second, key_of(s), bytes_of(s), -1);
    return true;
  });
  forget_if_empty(it);
}

std::vector<Waiter> LockManager::free_all(const ClientKey& client) {
  std::vector<Waiter> granted;
  auto c = client_files_.find(client);
  if (c == client_files_.end()) return granted;
  std::vector<FileId> files;
  for (const auto& [file, n] : c->second) files.push_back(file);
  for (const FileId& file : files) {
    auto it = files_.find(file);
    if (it == files_.end()) continue;
    FileState& state = it->second;
    RangeTable::Changes changes;
    std::vector<ByteRange> freed;
    state.locks.remove_client(client, &changes, &freed);
    count(file, state, changes);
    std::erase_if(state.waiters, [&](const Waiter& w) {
      if (key_of(w.lock.owner) != client) return false;
      count(file, state, client, bytes_of(w), -1);
      return true;
    });
    std::erase_if(state.shares, [&](const Share& s) {
      if (key_of(s) != client) return false;
      count(file, state, client, bytes_of(s), -1);
      return true;
    });
    for (Waiter& w : wake(file, state, freed)) granted.push_back(std::move(w));
    forget_if_empty(it);
  }
  return granted;
}

void LockManager::drop_volume(uint32_t volume) {
  away_.insert(volume);
  volume_grace_until_.erase(volume);
  for (auto it = files_.lower_bound(FileId{volume, 0, 0});
       it != files_.end() && it->first.volume == volume;) {
    count_file(it->first, it->second, -1);
    it = files_.erase(it);
  }
}

uint64_t LockManager::work() const {
  uint64_t n = 0;
  for (const auto& [file, state] : files_) n += state.locks.work();
  return n;
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
    state.locks.append_to(&out.locks);
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
  auto local = [](FileState& state, const ClientKey& client, size_t bytes) {
    state.total.entries++;
    state.total.bytes += bytes;
    Usage& u = state.by_client[client];
    u.entries++;
    u.bytes += bytes;
  };
  for (const Lock& l : table.locks) {
    if (l.file.volume != volume || l.range.empty()) return false;
    FileState& state = adopted[l.file];
    if (state.locks.conflicts(l) || state.locks.owner_overlaps(l)) return false;
    state.locks.insert(l);
    local(state, key_of(l.owner), bytes_of(l));
  }
  for (const Waiter& w : table.waiters) {
    if (w.lock.file.volume != volume || w.lock.range.empty()) return false;
    FileState& state = adopted[w.lock.file];
    for (const Waiter& other : state.waiters)
      if (same_request(other.lock, w.lock)) return false;
    state.waiters.push_back(w);
    local(state, key_of(w.lock.owner), bytes_of(w));
  }
  for (const Share& s : table.shares) {
    if (s.file.volume != volume) return false;
    FileState& state = adopted[s.file];
    for (const Share& other : state.shares) {
      if (other.host == s.host && other.oh == s.oh && other.address == s.address) return false;
      if (shares_conflict(s, other)) return false;
    }
    state.shares.push_back(s);
    local(state, key_of(s), bytes_of(s));
  }
  // What is still here of the volume (nothing, unless it never left) stays; the table's files
  // must not meet it.
  for (const auto& [file, state] : adopted)
    if (files_.count(file)) return false;
  for (auto& [file, state] : adopted) {
    count_file(file, state, +1);
    files_.emplace(file, std::move(state));
  }
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
  for (const auto& [file, state] : files_) state.locks.append_to(&out);
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
