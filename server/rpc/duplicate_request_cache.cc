#include "server/rpc/duplicate_request_cache.h"

#include <algorithm>
#include <netinet/in.h>

#include <boost/intrusive/list.hpp>
#include <cstring>
#include <functional>
#include <mutex>
#include <string_view>
#include <unordered_map>

namespace nasd::rpc {
namespace {

constexpr size_t kShards = 16;

uint64_t mix(uint64_t h, uint64_t v) {
  // splitmix64 finaliser over a running combination: cheap and well distributed.
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

struct DrcKeyHash {
  size_t operator()(const DrcKey& k) const {
    uint64_t a, b;
    std::memcpy(&a, k.address.data(), 8);
    std::memcpy(&b, k.address.data() + 8, 8);
    uint64_t h = mix(a, b);
    h = mix(h, uint64_t{k.family} << 16);
    h = mix(h, (uint64_t{k.xid} << 32) | k.proc);
    h = mix(h, (uint64_t{k.prog} << 32) | k.vers);
    return mix(h, k.args_hash);
  }
};

}  // namespace

namespace {
constexpr size_t kHashedArgBytes = 512;
}  // namespace

DrcKey DrcKey::make(const CallContext& call, std::span<const uint8_t> args) {
  DrcKey key;
  key.family = call.peer.ss_family;
  if (call.peer.ss_family == AF_INET) {
    const auto* sin = reinterpret_cast<const sockaddr_in*>(&call.peer);
    std::memcpy(key.address.data(), &sin->sin_addr, 4);
  } else if (call.peer.ss_family == AF_INET6) {
    const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(&call.peer);
    std::memcpy(key.address.data(), &sin6->sin6_addr, 16);
  }
  key.xid = call.xid;
  key.prog = call.prog;
  key.vers = call.vers;
  key.proc = call.proc;
  // The hash tells a retransmission (the same bytes) from a new call that reuses the xid. The
  // arguments' head and their length are enough for that: a WRITE's head holds its handle,
  // offset, count and stable_how, and hashing its whole 1 MiB payload cost 6% of the server's
  // CPU on sequential writes (issue 12 profile).
  const size_t hashed = std::min(args.size(), kHashedArgBytes);
  key.args_hash = std::hash<std::string_view>{}(
                      std::string_view(reinterpret_cast<const char*>(args.data()), hashed)) ^
                  (uint64_t{args.size()} * 0x9e3779b97f4a7c15ull);
  return key;
}

struct DrcEntry : boost::intrusive::list_base_hook<> {
  DrcKey key;
  bool done = false;
  bool recovered = false;  // the reply was rebuilt from the journal: it is what happened
  DuplicateRequestCache::Reply reply;
  DuplicateRequestCache::Clock::time_point completed_at{};
};

struct DuplicateRequestCache::Shard {
  std::mutex mu;
  std::unordered_map<DrcKey, DrcEntry, DrcKeyHash> entries;
  // Completed entries only, front = most recently used. A running call's entry is in
  // `entries` but not here, so no eviction can reach it.
  boost::intrusive::list<DrcEntry> lru;

  ~Shard() { lru.clear(); }  // unlink before the map frees the entries

  void erase(DrcEntry& e) {
    if (e.is_linked()) lru.erase(lru.iterator_to(e));
    DrcKey key = e.key;
    entries.erase(key);
  }
  void touch(DrcEntry& e) {
    if (e.is_linked()) lru.erase(lru.iterator_to(e));
    lru.push_front(e);
  }
  // Drops expired completed entries from the cold end, then the coldest completed entries
  // over capacity. Running calls' entries are never dropped.
  void trim(size_t capacity, Clock::time_point now, std::chrono::milliseconds ttl) {
    while (!lru.empty() && lru.back().completed_at + ttl <= now) erase(lru.back());
    while (entries.size() > capacity && !lru.empty()) erase(lru.back());
  }
};

DuplicateRequestCache::DuplicateRequestCache(Options options)
    : options_(options),
      per_shard_capacity_(std::max<size_t>(1, (options.capacity + kShards - 1) / kShards)),
      shards_(new Shard[kShards]) {}

DuplicateRequestCache::~DuplicateRequestCache() = default;

DuplicateRequestCache::Shard& DuplicateRequestCache::shard_for(const DrcKey& key) {
  return shards_[DrcKeyHash{}(key) % kShards];
}

DuplicateRequestCache::Lookup DuplicateRequestCache::begin(const DrcKey& key,
                                                           Clock::time_point now) {
  Shard& s = shard_for(key);
  std::lock_guard lock(s.mu);
  auto it = s.entries.find(key);
  if (it != s.entries.end()) {
    DrcEntry& e = it->second;
    if (!e.done) return {State::InProgress, nullptr};
    if (e.completed_at + options_.ttl > now) {
      s.touch(e);
      return {State::Done, e.reply};
    }
    s.erase(e);  // expired: the call runs again
  }
  // Room for one more running call: only completed entries can make it.
  s.trim(per_shard_capacity_ - 1, now, options_.ttl);
  if (s.entries.size() >= per_shard_capacity_) return {State::Full, nullptr};
  auto [pos, inserted] = s.entries.try_emplace(key);
  pos->second.key = key;
  return {State::New, nullptr};
}

void DuplicateRequestCache::complete(const DrcKey& key, Reply reply, Clock::time_point now) {
  Shard& s = shard_for(key);
  std::lock_guard lock(s.mu);
  auto [pos, inserted] = s.entries.try_emplace(key);
  DrcEntry& e = pos->second;
  if (inserted) e.key = key;  // complete() without begin(): keep the reply anyway
  s.touch(e);
  // A copy that ran while the volume was still being recovered (it answered JUKEBOX, or went
  // to a node that no longer has it) must not replace the reply the journal recorded.
  if (e.recovered) return;
  e.done = true;
  e.reply = std::move(reply);
  e.completed_at = now;
  s.trim(per_shard_capacity_, now, options_.ttl);
}

void DuplicateRequestCache::insert_completed(const DrcKey& key, Reply reply,
                                             Clock::time_point now) {
  Shard& s = shard_for(key);
  std::lock_guard lock(s.mu);
  auto [pos, inserted] = s.entries.try_emplace(key);
  DrcEntry& e = pos->second;
  if (inserted) e.key = key;
  s.touch(e);  // completed now, so it belongs on the LRU list
  e.done = true;
  e.recovered = true;
  e.reply = std::move(reply);
  e.completed_at = now;
  s.trim(per_shard_capacity_, now, options_.ttl);
}

void DuplicateRequestCache::abandon(const DrcKey& key) {
  Shard& s = shard_for(key);
  std::lock_guard lock(s.mu);
  auto it = s.entries.find(key);
  if (it != s.entries.end() && !it->second.done) s.erase(it->second);
}

size_t DuplicateRequestCache::size() const {
  size_t n = 0;
  for (size_t i = 0; i < kShards; ++i) {
    std::lock_guard lock(shards_[i].mu);
    n += shards_[i].entries.size();
  }
  return n;
}

}  // namespace nasd::rpc
