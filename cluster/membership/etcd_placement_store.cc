#include "cluster/membership/etcd_placement_store.h"

#include <stdexcept>

#include "util/log.h"

namespace nasd::membership {
namespace {

std::string failure_of(const EtcdClient::Reply& r) {
  return r.kind == EtcdClient::Reply::Kind::Refused
             ? "etcd refused: " + r.error.message + " (code " + std::to_string(r.error.code) + ")"
             : r.failure;
}

}  // namespace

EtcdPlacementStore::EtcdPlacementStore(EtcdOptions options)
    : key_(options.prefix + "placement"),
      prefix_(options.prefix),
      timeout_(options.timeout),
      seal_(options.value_key) {
  if (options.prefix.empty()) throw std::invalid_argument("etcd: the key prefix is empty");
  client_ = std::make_unique<EtcdClient>(std::move(options));
}

bool EtcdPlacementStore::read(Placement* out, bool* found, std::string* error) {
  EtcdClient::Reply r = client_->call("/v3/kv/range", etcd::range_request(key_),
                                      std::chrono::steady_clock::now() + timeout_);
  if (!r.ok()) {
    *error = failure_of(r);
    return false;
  }
  etcd::RangeReply range;
  if (!etcd::decode_range(r.body, &range, error)) return false;
  *found = range.kv.has_value();
  if (!*found) return true;
  if (range.kv->key != key_) {
    *error = "etcd answered with another key";
    return false;
  }
  std::string text, why;
  if (!seal_.open(key_, range.kv->value, &text, &why)) {
    *error = "etcd key " + key_ + " " + why + ": refused";
    util::log("cluster").warn("placement store: " + *error);
    return false;
  }
  if (!decode_placement(text, out, error)) return false;
  out->version = static_cast<uint64_t>(range.kv->mod_revision);
  return true;
}

PlacementWrite EtcdPlacementStore::transact(Placement& next, const std::string& body,
                                            std::string* error) {
  EtcdClient::Reply r =
      client_->call("/v3/kv/txn", body, std::chrono::steady_clock::now() + timeout_);
  etcd::TxnReply txn;
  if (!r.ok() || !etcd::decode_txn(r.body, &txn, error)) {
    // It may have been applied: the next read tells (the version then moved on).
    if (!r.ok()) *error = failure_of(r);
    return PlacementWrite::Unreachable;
  }
  if (!txn.succeeded) {
    *error = "the placement (or the volume's lease) changed meanwhile";
    return PlacementWrite::Conflict;
  }
  next.version = static_cast<uint64_t>(txn.revision);
  return PlacementWrite::Written;
}

PlacementWrite EtcdPlacementStore::write(Placement& next, std::string* error) {
  const std::string text = seal_.seal(key_, encode_placement(next));
  const std::string body =
      next.version == 0
          ? etcd::create_txn(key_, text, 0)
          : etcd::replace_txn(key_, text, 0, static_cast<int64_t>(next.version));
  return transact(next, body, error);
}

PlacementWrite EtcdPlacementStore::write_holding(Placement& next, uint32_t volume,
                                                 const std::string& node, uint64_t epoch,
                                                 std::string* error) {
  (void)node;  // the epoch names the holder: etcd gives every new holder its own revision
  if (epoch == 0) {
    *error = "no lease epoch";
    return PlacementWrite::Conflict;
  }
  const std::string body = etcd::replace_if_held_txn(
      key_, seal_.seal(key_, encode_placement(next)), static_cast<int64_t>(next.version),
      prefix_ + "volume-" + std::to_string(volume), static_cast<int64_t>(epoch));
  return transact(next, body, error);
}

}  // namespace nasd::membership
