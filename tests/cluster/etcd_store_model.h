// TEST FIXTURE ONLY: the part of etcd's semantics the etcd lease authority relies on, as a pure
// state machine on a simulated clock (no threads, no clocks of its own), so ClusterSimulation can
// run a cluster against "etcd" with random faults:
//   - one revision counter for the whole store, bumped by every write (other keys' too);
//   - keys with create_revision and mod_revision, attached to a lease or not;
//   - leases with a TTL in whole seconds (at least kMinTtlS), renewed by keepalive to
//     now + TTL, refused once past their expiry, and revoked lazily (the leader's revoke loop
//     runs every kRevokeEveryMs) together with their keys;
//   - a leader change extends every lease (etcd's promote: now + TTL + election timeout);
//   - transactions comparing create_revision or mod_revision, applied atomically.
// EtcdLeaseAuthority's steps (read, grant, create-if-absent, keepalive, delete-if-unchanged)
// are separate calls here, as they are separate requests to the real etcd, so the simulation
// can interleave two nodes' steps.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace nasd::cluster::testing {

class EtcdStoreModel {
 public:
  static constexpr int64_t kMinTtlS = 2;  // etcd: 1.5 x election timeout, rounded up
  static constexpr int64_t kRevokeEveryMs = 500;
  static constexpr int64_t kElectionMs = 1000;

  struct Key {
    std::string value;
    int64_t create_revision = 0, mod_revision = 0, lease = 0;
  };

  std::optional<Key> get(const std::string& key) const {
    auto it = keys_.find(key);
    if (it == keys_.end()) return std::nullopt;
    return it->second;
  }
  int64_t revision() const { return revision_; }

  int64_t grant(int64_t now, int64_t ttl_s) {
    ttl_s = std::max(ttl_s, kMinTtlS);
    const int64_t id = next_lease_++;
    leases_[id] = {ttl_s, now + ttl_s * 1000};
    return id;
  }
  // Seconds of TTL after the renewal; 0 when the lease is gone or already past its expiry.
  int64_t keepalive(int64_t now, int64_t id) {
    auto it = leases_.find(id);
    if (it == leases_.end() || now >= it->second.expires) return 0;
    it->second.expires = now + it->second.ttl_s * 1000;
    return it->second.ttl_s;
  }
  void revoke(int64_t id) {
    if (leases_.erase(id) == 0) return;
    bool wrote = false;
    for (auto it = keys_.begin(); it != keys_.end();) {
      if (it->second.lease == id) {
        it = keys_.erase(it);
        wrote = true;
      } else {
        ++it;
      }
    }
    if (wrote) ++revision_;
  }
  // Creates `key` attached to `lease` if it does not exist; the new key's revision, or 0.
  int64_t create_if_absent(const std::string& key, const std::string& value, int64_t lease) {
    if (keys_.count(key) || !leases_.count(lease)) return 0;
    ++revision_;
    keys_[key] = {value, revision_, revision_, lease};
    return revision_;
  }
  // BROKEN ON PURPOSE (the simulation's check that the CAS matters): puts `key` whatever is
  // there. The key's revision.
  int64_t put(const std::string& key, const std::string& value, int64_t lease) {
    if (!leases_.count(lease)) return 0;
    ++revision_;
    auto it = keys_.find(key);
    const int64_t created = it == keys_.end() ? revision_ : it->second.create_revision;
    keys_[key] = {value, created, revision_, lease};
    return revision_;
  }
  bool delete_if_unchanged(const std::string& key, int64_t mod_revision) {
    auto it = keys_.find(key);
    if (it == keys_.end() || it->second.mod_revision != mod_revision) return false;
    keys_.erase(it);
    ++revision_;
    return true;
  }
  // Some other client writes something: revisions jump between our keys' epochs.
  void unrelated_write() { ++revision_; }
  // The leader's revoke loop: leases past their expiry go, with their keys.
  void revoke_expired(int64_t now) {
    for (auto it = leases_.begin(); it != leases_.end();) {
      const int64_t id = it->first;
      if (now >= it->second.expires) {
        ++it;
        revoke(id);
        it = leases_.upper_bound(id);
      } else {
        ++it;
      }
    }
  }
  void leader_change(int64_t now) {
    for (auto& [id, l] : leases_) l.expires = std::max(l.expires, now + l.ttl_s * 1000 + kElectionMs);
  }
  // Whether `key` is held by `value` under a lease that has not expired at `now`.
  bool held_by(const std::string& key, const std::string& value, int64_t now) const {
    auto it = keys_.find(key);
    if (it == keys_.end() || it->second.value != value) return false;
    auto l = leases_.find(it->second.lease);
    return l != leases_.end() && now < l->second.expires;
  }

 private:
  struct Lease {
    int64_t ttl_s = 0, expires = 0;
  };
  int64_t revision_ = 1, next_lease_ = 1;
  std::map<std::string, Key> keys_;
  std::map<int64_t, Lease> leases_;
};

}  // namespace nasd::cluster::testing
