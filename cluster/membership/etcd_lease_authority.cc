#include "cluster/membership/etcd_lease_authority.h"

#include <stdexcept>

#include "util/log.h"

namespace nasd::membership {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

constexpr size_t kMaxNodeName = 255;
constexpr size_t kMaxPrefix = 200;

bool valid_node_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxNodeName) return false;
  for (unsigned char c : name)
    if (c <= ' ' || c == 0x7f) return false;
  return true;
}

LeaseAnswer unreachable(std::string why) {
  LeaseAnswer a;
  a.verdict = LeaseVerdict::Unreachable;
  a.error = std::move(why);
  return a;
}

}  // namespace

EtcdLeaseAuthority::EtcdLeaseAuthority(EtcdOptions options)
    : prefix_(options.prefix), timeout_(options.timeout), seal_(options.value_key) {
  if (prefix_.empty() || prefix_.size() > kMaxPrefix)
    throw std::invalid_argument("etcd: the key prefix must have 1 to 200 bytes");
  if (timeout_ < milliseconds(100)) throw std::invalid_argument("etcd: timeout below 100 ms");
  client_ = std::make_unique<EtcdClient>(options);
  inspect_client_ = std::make_unique<EtcdClient>(std::move(options));
}

int64_t EtcdLeaseAuthority::now_ms() const {
  return std::chrono::duration_cast<milliseconds>(SteadyClock::now().time_since_epoch()).count();
}

std::string EtcdLeaseAuthority::key_of(uint32_t volume_id) const {
  return prefix_ + "volume-" + std::to_string(volume_id);
}

static std::string failure_of(const EtcdClient::Reply& r) {
  return r.kind == EtcdClient::Reply::Kind::Refused
             ? "etcd refused: " + r.error.message + " (code " + std::to_string(r.error.code) + ")"
             : r.failure;
}

bool EtcdLeaseAuthority::read(EtcdClient& client, const std::string& key, TimePoint deadline,
                              std::optional<etcd::KeyValue>* kv, std::string* error) {
  EtcdClient::Reply r = client.call("/v3/kv/range", etcd::range_request(key), deadline);
  if (!r.ok()) {
    *error = failure_of(r);
    return false;
  }
  etcd::RangeReply range;
  if (!etcd::decode_range(r.body, &range, error)) return false;
  if (range.kv && range.kv->key != key) {
    *error = "etcd answered with another key";
    return false;
  }
  if (range.kv && !open_value(key, &*range.kv, error)) return false;
  *kv = std::move(range.kv);
  return true;
}

bool EtcdLeaseAuthority::open_value(const std::string& key, etcd::KeyValue* kv,
                                    std::string* error) const {
  std::string name, why;
  if (!seal_.open(key, kv->value, &name, &why)) {
    *error = "etcd key " + key + " " + why + ": refused";
    util::log("cluster").warn("lease authority: " + *error);
    return false;
  }
  if (!valid_node_name(name)) {
    *error = "etcd key " + key + " does not hold a node name";
    return false;
  }
  kv->value = std::move(name);
  return true;
}

void EtcdLeaseAuthority::revoke(int64_t lease, TimePoint deadline) {
  // Best effort: an etcd lease that is not revoked lapses at its TTL.
  if (lease != 0) call("/v3/lease/revoke", etcd::lease_id_request(lease), deadline);
}

Lease EtcdLeaseAuthority::describe(EtcdClient& client, const etcd::KeyValue& kv, int64_t start,
                                   TimePoint deadline) {
  Lease lease;
  lease.holder = kv.value;
  lease.epoch = static_cast<uint64_t>(kv.create_revision);
  lease.expires_ms = start;
  if (kv.lease != 0) {
    EtcdClient::Reply r =
        client.call("/v3/lease/timetolive", etcd::lease_id_request(kv.lease), deadline);
    etcd::LeaseReply ttl;
    std::string ignored;
    // TTL is whole seconds left, rounded down: the lease ends within a second after this.
    if (r.ok() && etcd::decode_time_to_live(r.body, &ttl, &ignored) && ttl.ttl > 0)
      lease.expires_ms = start + ttl.ttl * 1000;
  }
  return lease;
}

LeaseAnswer EtcdLeaseAuthority::take(const std::string& key, const std::string& node,
                                     int64_t ttl_s, int64_t start, TimePoint deadline,
                                     std::optional<etcd::KeyValue>* seen) {
  std::string error;
  EtcdClient::Reply r = call("/v3/lease/grant", etcd::lease_grant_request(ttl_s), deadline);
  etcd::LeaseReply granted;
  if (!r.ok()) return unreachable("granting an etcd lease: " + failure_of(r));
  if (!etcd::decode_lease_grant(r.body, &granted, &error))
    return unreachable("granting an etcd lease: " + error);
  if (granted.ttl < ttl_s) {
    revoke(granted.id, deadline);
    return unreachable("etcd granted " + std::to_string(granted.ttl) + " s, not " +
                       std::to_string(ttl_s) + " s");
  }
  // The compare-and-swap: only one creator of the key wins.
  r = call("/v3/kv/txn", etcd::create_txn(key, seal_.seal(key, node), granted.id), deadline);
  etcd::TxnReply txn;
  if (!r.ok() || !etcd::decode_txn(r.body, &txn, &error)) {
    // It may have been applied: revoking our etcd lease deletes the key again if so.
    revoke(granted.id, deadline);
    return unreachable("creating " + key + ": " + (r.ok() ? error : failure_of(r)));
  }
  if (!txn.succeeded) {
    revoke(granted.id, deadline);
    if (txn.kv && txn.kv->key != key) return unreachable("etcd answered with another key");
    if (txn.kv && !open_value(key, &*txn.kv, &error)) return unreachable(error);
    *seen = std::move(txn.kv);
    LeaseAnswer lost;
    lost.verdict = LeaseVerdict::HeldByOther;
    return lost;
  }
  LeaseAnswer won;
  won.verdict = LeaseVerdict::Granted;
  won.lease.holder = node;
  // The transaction's revision is the key's create_revision.
  won.lease.epoch = static_cast<uint64_t>(txn.revision);
  won.lease.expires_ms = start + granted.ttl * 1000 - kSkewMarginMs;
  return won;
}

LeaseAnswer EtcdLeaseAuthority::renew(const std::string& key, const std::string& node,
                                      const etcd::KeyValue& kv, int64_t ttl_s, int64_t start,
                                      TimePoint deadline, bool* lapsed) {
  std::string error;
  *lapsed = false;
  int64_t ttl = 0;
  if (kv.lease != 0) {
    EtcdClient::Reply r = call("/v3/lease/keepalive", etcd::lease_id_request(kv.lease), deadline);
    etcd::LeaseReply alive;
    if (!r.ok()) return unreachable("renewing: " + failure_of(r));
    if (!etcd::decode_keepalive(r.body, &alive, &error)) return unreachable("renewing: " + error);
    if (alive.ttl <= 0) {
      // Our etcd lease ran out: etcd deletes the key (if it has not yet). Not ours any more.
      *lapsed = true;
      return unreachable("the etcd lease of " + key + " expired before it was renewed");
    }
    ttl = alive.ttl;
  }
  if (ttl < ttl_s) {
    // The key's etcd lease is shorter than asked for (another lease length configured before)
    // or missing: move the key, unchanged otherwise, to a new etcd lease of the right length.
    EtcdClient::Reply r = call("/v3/lease/grant", etcd::lease_grant_request(ttl_s), deadline);
    etcd::LeaseReply granted;
    if (!r.ok()) return unreachable("granting an etcd lease: " + failure_of(r));
    if (!etcd::decode_lease_grant(r.body, &granted, &error) || granted.ttl < ttl_s) {
      revoke(granted.id, deadline);
      return unreachable("granting an etcd lease: " + (error.empty() ? "TTL too short" : error));
    }
    r = call("/v3/kv/txn", etcd::replace_txn(key, seal_.seal(key, node), granted.id, kv.mod_revision),
             deadline);
    etcd::TxnReply txn;
    if (!r.ok() || !etcd::decode_txn(r.body, &txn, &error) || !txn.succeeded) {
      revoke(granted.id, deadline);
      *lapsed = r.ok() && error.empty();  // the key changed meanwhile: read it again
      return unreachable("moving " + key + " to a new etcd lease: " +
                         (r.ok() ? (error.empty() ? "key changed" : error) : failure_of(r)));
    }
    revoke(kv.lease, deadline);
    ttl = granted.ttl;
  }
  LeaseAnswer a;
  a.verdict = LeaseVerdict::Granted;
  a.lease.holder = node;
  a.lease.epoch = static_cast<uint64_t>(kv.create_revision);
  a.lease.expires_ms = start + ttl * 1000 - kSkewMarginMs;
  return a;
}

LeaseAnswer EtcdLeaseAuthority::acquire(uint32_t volume_id, const std::string& node,
                                        int64_t duration_ms) {
  if (!valid_node_name(node)) return unreachable("invalid node name '" + node + "'");
  if (duration_ms <= 0) return unreachable("invalid lease length");
  try {
    const int64_t start = now_ms();
    const TimePoint deadline = SteadyClock::now() + timeout_;
    const int64_t ttl_s = (duration_ms + 999) / 1000;  // never shorter than asked for
    const std::string key = key_of(volume_id);
    std::string last = "the lease kept changing hands";
    // A few rounds: the key may vanish (expiry, release) or appear between our read and write.
    for (int round = 0; round < 3; ++round) {
      std::optional<etcd::KeyValue> kv;
      std::string error;
      if (!read(*client_, key, deadline, &kv, &error)) return unreachable(error);
      if (!kv) {
        LeaseAnswer a = take(key, node, ttl_s, start, deadline, &kv);
        if (a.verdict != LeaseVerdict::HeldByOther) return a;
        if (!kv) continue;  // created and gone again: read once more
      }
      if (kv->value == node) {
        bool lapsed = false;
        LeaseAnswer a = renew(key, node, *kv, ttl_s, start, deadline, &lapsed);
        if (!lapsed) return a;
        last = a.error;
        continue;
      }
      LeaseAnswer held;
      held.verdict = LeaseVerdict::HeldByOther;
      held.lease = describe(*client_, *kv, start, deadline);
      return held;
    }
    return unreachable(last);
  } catch (const std::exception& e) {
    return unreachable(std::string("etcd: ") + e.what());
  } catch (...) {
    return unreachable("etcd: unknown failure");
  }
}

bool EtcdLeaseAuthority::release(uint32_t volume_id, const std::string& node) {
  try {
    const TimePoint deadline = SteadyClock::now() + timeout_;
    const std::string key = key_of(volume_id);
    std::optional<etcd::KeyValue> kv;
    std::string error;
    if (!read(*client_, key, deadline, &kv, &error) || !kv || kv->value != node) return false;
    EtcdClient::Reply r = call("/v3/kv/txn", etcd::delete_txn(key, kv->mod_revision), deadline);
    etcd::TxnReply txn;
    const bool deleted = r.ok() && etcd::decode_txn(r.body, &txn, &error) && txn.succeeded;
    // The etcd lease was ours alone (every take grants a new one): revoking it removes the key
    // too if the delete did not get through, and cannot touch a later holder's key.
    revoke(kv->lease, deadline);
    return deleted;
  } catch (...) {
    return false;
  }
}

bool EtcdLeaseAuthority::inspect(uint32_t volume_id, Lease* out, std::string* error) {
  try {
    const int64_t start = now_ms();
    const TimePoint deadline = SteadyClock::now() + timeout_;
    std::optional<etcd::KeyValue> kv;
    if (!read(*inspect_client_, key_of(volume_id), deadline, &kv, error)) return false;
    *out = kv ? describe(*inspect_client_, *kv, start, deadline) : Lease{};
    return true;
  } catch (const std::exception& e) {
    *error = std::string("etcd: ") + e.what();
    return false;
  }
}

}  // namespace nasd::membership
