// The placement record in etcd (placement_store.h): the key `<prefix>placement`, no etcd lease
// (it outlives every node), its version the key's mod_revision; writes are transactions that
// compare it, and a hand-over's also compares the volume's lease key (`<prefix>volume-<id>`)
// with the create_revision that is the holder's epoch. The value is tagged with the cluster key
// (etcd_value_seal.h): one without a valid tag is refused (an error naming the key, logged).
#pragma once

#include <memory>
#include <string>

#include "cluster/membership/etcd_client.h"
#include "cluster/membership/etcd_value_seal.h"
#include "cluster/membership/placement_store.h"

namespace nasd::membership {

class EtcdPlacementStore : public PlacementStore {
 public:
  // Throws std::invalid_argument on bad options (as EtcdClient).
  explicit EtcdPlacementStore(EtcdOptions options);

  bool read(Placement* out, bool* found, std::string* error) override;
  PlacementWrite write(Placement& next, std::string* error) override;
  PlacementWrite write_holding(Placement& next, uint32_t volume, const std::string& node,
                               uint64_t epoch, std::string* error) override;

 private:
  PlacementWrite transact(Placement& next, const std::string& body, std::string* error);

  const std::string key_;
  const std::string prefix_;
  const std::chrono::milliseconds timeout_;
  const EtcdValueSeal seal_;
  std::unique_ptr<EtcdClient> client_;
};

}  // namespace nasd::membership
