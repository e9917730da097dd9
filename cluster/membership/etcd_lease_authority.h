// A LeaseAuthority kept in etcd, for nodes that share no folder to lock on (nodes on several
// machines). One key per volume, `<prefix>volume-<id>`, whose value is the holder's node name,
// tagged with the cluster key (etcd_value_seal.h: a value without a valid tag is refused and
// logged, never taken for a holder), and which is attached to an etcd lease of the requested length (TTL, whole seconds, rounded
// up):
//   free        the key does not exist (never taken, released, or its etcd lease expired:
//               etcd deletes the key itself, on its own clock, when the holder stops renewing);
//   take        grant an etcd lease, then one transaction: create the key only if it does not
//               exist (compare create_revision == 0). Of two nodes racing, etcd applies one
//               transaction first and the other's compare fails: never two holders;
//   renew       the holder keeps its etcd lease alive (keepalive); the key stays as it is;
//   release     delete the key only if it is unchanged since we read it as ours (compare
//               mod_revision), and revoke its etcd lease.
// The epoch (fencing token) is the key's create_revision: etcd's revision counter only grows,
// so a new holder always gets a larger token than every earlier one, and a holder keeps its
// token while it renews. Tokens jump (other keys change the revision too); only order matters.
//
// Clocks: etcd counts the TTL on its leader's clock from when it handled the request, which is
// after we sent it. `Lease::expires_ms` is therefore reported on this process's steady clock
// (now_ms()) as request start + TTL - kSkewMarginMs: an instant at or before the real expiry
// however far the machines' wall clocks are apart (only their rates matter, and the margin
// covers those).
//
// Failure: a call that no member answers by the deadline (EtcdOptions::timeout) is
// LeaseVerdict::Unreachable, never a grant; the caller then stops trusting its lease when its
// own margin says so. A reply that does not parse or is impossible (a key that is not ours to
// read, a TTL shorter than asked for) is Unreachable too.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "cluster/membership/authority_options.h"
#include "cluster/membership/etcd_client.h"
#include "cluster/membership/etcd_value_seal.h"
#include "cluster/membership/lease_authority.h"

namespace nasd::membership {

class EtcdLeaseAuthority : public LeaseAuthority {
 public:
  static constexpr int64_t kSkewMarginMs = 100;

  // Throws std::invalid_argument on unusable options (no endpoint, a URL that is not http(s),
  // a prefix that is empty or longer than 200 bytes, no cluster key).
  explicit EtcdLeaseAuthority(EtcdOptions options);

  LeaseAnswer acquire(uint32_t volume_id, const std::string& node, int64_t duration_ms) override;
  bool release(uint32_t volume_id, const std::string& node) override;
  bool inspect(uint32_t volume_id, Lease* out, std::string* error) override;
  int64_t now_ms() const override;
  // Revisions of one etcd cluster only grow.
  bool epochs_fence() const override { return true; }

  std::string key_of(uint32_t volume_id) const;

 private:
  using TimePoint = std::chrono::steady_clock::time_point;
  EtcdClient::Reply call(const char* path, const std::string& body, TimePoint deadline) {
    return client_->call(path, body, deadline);
  }
  // Reads the volume's key; false (and *error) when etcd cannot be asked.
  bool read(EtcdClient& client, const std::string& key, TimePoint deadline,
            std::optional<etcd::KeyValue>* kv, std::string* error);
  // The Lease a key stands for, with how long the key's etcd lease has left (best effort:
  // unknown leaves expires_ms at `start`).
  Lease describe(EtcdClient& client, const etcd::KeyValue& kv, int64_t start, TimePoint deadline);
  LeaseAnswer take(const std::string& key, const std::string& node, int64_t ttl_s, int64_t start,
                   TimePoint deadline, std::optional<etcd::KeyValue>* seen);
  LeaseAnswer renew(const std::string& key, const std::string& node, const etcd::KeyValue& kv,
                    int64_t ttl_s, int64_t start, TimePoint deadline, bool* lapsed);
  void revoke(int64_t lease, TimePoint deadline);
  // Replaces kv->value by the node name its tag vouches for; false and *error (logged) when
  // the tag is missing or wrong or the name is not one.
  bool open_value(const std::string& key, etcd::KeyValue* kv, std::string* error) const;

  const std::string prefix_;
  const std::chrono::milliseconds timeout_;
  const EtcdValueSeal seal_;
  // Lease calls and status reads on separate clients (each serializes its calls): an admin
  // asking for the status while etcd is slow must not hold a renewal back.
  std::unique_ptr<EtcdClient> client_, inspect_client_;
};

}  // namespace nasd::membership
