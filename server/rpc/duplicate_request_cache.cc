#include "server/rpc/duplicate_request_cache.h"

#include <algorithm>
#include <netinet/in.h>

#include <boost/container/static_vector.hpp>
#include <boost/intrusive/list.hpp>
#include <boost/intrusive/unordered_set.hpp>
#include <cstring>
#include <functional>
#include <mutex>
#include <string_view>
#include <vector>

#include "server/rpc/reply_pool.h"

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

namespace bi = boost::intrusive;

struct DrcEntry : bi::list_base_hook<>, bi::unordered_set_base_hook<bi::store_hash<true>> {
  DrcKey key;
  bool done = false;
  bool recovered = false;  // the reply was rebuilt from the journal: it is what happened
  DuplicateRequestCache::Reply reply;
  DuplicateRequestCache::Clock::time_point completed_at{};
};

namespace {

// The bucket hash. The shard is chosen by the key hash's low bits, so every key of one shard
// shares them: the buckets are told apart by the bits above.
struct EntryHash {
  size_t operator()(const DrcKey& k) const { return DrcKeyHash{}(k) >> 8; }
  size_t operator()(const DrcEntry& e) const { return (*this)(e.key); }
};
struct EntryEqual {
  bool operator()(const DrcEntry& a, const DrcEntry& b) const { return a.key == b.key; }
  bool operator()(const DrcKey& k, const DrcEntry& e) const { return k == e.key; }
  bool operator()(const DrcEntry& e, const DrcKey& k) const { return k == e.key; }
};
using EntrySet = bi::unordered_set<DrcEntry, bi::hash<EntryHash>, bi::equal<EntryEqual>,
                                   bi::power_2_buckets<true>, bi::constant_time_size<true>>;

size_t bucket_count_for(size_t capacity) {
  size_t n = 16;
  while (n < capacity) n *= 2;
  return n;
}

}  // namespace

// Entries are made on demand and never freed before the cache: a dropped entry goes to the
// shard's spares and the next call takes it, so a cache at its capacity (the steady state
// under load) allocates no entry, where a node-based map allocated one per cacheable call
// (issue 12: no per-call allocation on the hot path). The buckets are sized once for the
// shard's capacity; running calls may push a shard past it briefly (complete() without
// begin(), recovered replies), which only lengthens a chain.
struct DuplicateRequestCache::Shard {
  explicit Shard(size_t capacity)
      : buckets(new EntrySet::bucket_type[bucket_count_for(capacity)]),
        entries(EntrySet::bucket_traits(buckets.get(), bucket_count_for(capacity))) {}
  ~Shard() {
    lru.clear();  // unlink before the entries go
    entries.clear();
  }

  std::mutex mu;
  std::unique_ptr<EntrySet::bucket_type[]> buckets;
  EntrySet entries;
  // Completed entries only, front = most recently used. A running call's entry is in
  // `entries` but not here, so no eviction can reach it.
  bi::list<DrcEntry> lru;
  std::vector<std::unique_ptr<DrcEntry>> made;  // every entry of this shard (they never move)
  std::vector<DrcEntry*> spares;                // made, not in `entries`
  // Replies of entries dropped under the lock, for this thread's spare replies once it is
  // released (Guard): the cache held them, so nothing else may. Past the first few, a dropped
  // reply is freed as before.
  boost::container::static_vector<Reply, 4> dropped;

  // Holds the shard's lock; on leaving, releases it, then hands the dropped replies on.
  class Guard {
   public:
    explicit Guard(Shard& s) : shard_(s), lock_(s.mu) {}
    ~Guard() {
      boost::container::static_vector<Reply, 4> replies = std::move(shard_.dropped);
      shard_.dropped.clear();
      lock_.unlock();
      for (auto& reply : replies) recycle_reply(std::move(reply));
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    Shard& shard_;
    std::unique_lock<std::mutex> lock_;
  };

  DrcEntry* find(const DrcKey& key) {
    auto it = entries.find(key, EntryHash{}, EntryEqual{});
    return it == entries.end() ? nullptr : &*it;
  }
  DrcEntry& add(const DrcKey& key) {
    if (spares.empty()) {
      made.push_back(std::make_unique<DrcEntry>());
      spares.push_back(made.back().get());
    }
    DrcEntry& e = *spares.back();
    spares.pop_back();
    e.key = key;
    e.done = e.recovered = false;
    e.completed_at = {};
    entries.insert(e);
    return e;
  }
  DrcEntry& find_or_add(const DrcKey& key) {
    DrcEntry* e = find(key);
    return e ? *e : add(key);
  }
  void erase(DrcEntry& e) {
    if (e.bi::list_base_hook<>::is_linked()) lru.erase(lru.iterator_to(e));
    entries.erase(entries.iterator_to(e));
    if (e.reply && dropped.size() < dropped.capacity()) dropped.push_back(std::move(e.reply));
    e.reply.reset();
    spares.push_back(&e);
  }
  void touch(DrcEntry& e) {
    if (e.bi::list_base_hook<>::is_linked()) lru.erase(lru.iterator_to(e));
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
      per_shard_capacity_(std::max<size_t>(1, (options.capacity + kShards - 1) / kShards)) {
  shards_.reserve(kShards);
  for (size_t i = 0; i < kShards; ++i) shards_.push_back(std::make_unique<Shard>(per_shard_capacity_));
}

DuplicateRequestCache::~DuplicateRequestCache() = default;

DuplicateRequestCache::Shard& DuplicateRequestCache::shard_for(const DrcKey& key) {
  return *shards_[DrcKeyHash{}(key) % kShards];
}

DuplicateRequestCache::Lookup DuplicateRequestCache::begin(const DrcKey& key,
                                                           Clock::time_point now) {
  Shard& s = shard_for(key);
  Shard::Guard guard(s);
  if (DrcEntry* e = s.find(key)) {
    if (!e->done) return {State::InProgress, nullptr};
    if (e->completed_at + options_.ttl > now) {
      s.touch(*e);
      return {State::Done, e->reply};
    }
    s.erase(*e);  // expired: the call runs again
  }
  // Room for one more running call: only completed entries can make it.
  s.trim(per_shard_capacity_ - 1, now, options_.ttl);
  if (s.entries.size() >= per_shard_capacity_) return {State::Full, nullptr};
  s.add(key);
  return {State::New, nullptr};
}

void DuplicateRequestCache::complete(const DrcKey& key, Reply reply, Clock::time_point now) {
  Shard& s = shard_for(key);
  Shard::Guard guard(s);
  DrcEntry& e = s.find_or_add(key);  // complete() without begin(): keep the reply anyway
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
  Shard::Guard guard(s);
  DrcEntry& e = s.find_or_add(key);
  s.touch(e);  // completed now, so it belongs on the LRU list
  e.done = true;
  e.recovered = true;
  e.reply = std::move(reply);
  e.completed_at = now;
  s.trim(per_shard_capacity_, now, options_.ttl);
}

void DuplicateRequestCache::abandon(const DrcKey& key) {
  Shard& s = shard_for(key);
  Shard::Guard guard(s);
  DrcEntry* e = s.find(key);
  if (e && !e->done) s.erase(*e);
}

namespace {
// `count` of every shard, each read under its lock.
template <class Shards, class Count>
size_t sum_over(const Shards& shards, Count count) {
  size_t n = 0;
  for (const auto& shard : shards) {
    std::lock_guard lock(shard->mu);
    n += count(*shard);
  }
  return n;
}
}  // namespace

size_t DuplicateRequestCache::entries_made() const {
  return sum_over(shards_, [](const auto& shard) { return shard.made.size(); });
}

size_t DuplicateRequestCache::size() const {
  return sum_over(shards_, [](const auto& shard) { return shard.entries.size(); });
}

}  // namespace nasd::rpc
