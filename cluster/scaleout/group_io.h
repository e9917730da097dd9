// Reading, writing, checking and repairing one protection group on the units of many nodes.
//
// A group of shape N+M holds `length` bytes: data unit i is bytes [i*U, (i+1)*U) with
// U = kStripeUnit (the last one zero-padded), or the whole group when it fits one unit (N 1:
// a mirror). Every unit of the group is stored with the same length (min(U, length)).
//
// UnitAccess hides where a unit lives: LocalUnits reaches the NodeUnits of this process (tests,
// and a node's own drives); the unit service (unit_service.h) reaches other nodes. GroupIo
// issues a group's unit calls in parallel.
//
// Guarantees:
//   * read_group returns the bytes written whenever at most M units are unreadable (missing,
//     corrupt, on a dead node or failed drive): missing data units are rebuilt from parity;
//   * write_group succeeds when at least N units landed (the group is readable); the units that
//     did not are reported, and the caller lands them (rewrite_units) or does not record the
//     group: a record cannot say that a unit is missing, so re-protect would never rebuild it;
//   * verify_group (fsck) re-encodes the data units and compares every parity unit;
//   * repair_group rebuilds every unreadable unit: in place when its drive is usable (scrub),
//     elsewhere per replace_units when its node or drive is gone (re-protect).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/scaleout/erasure_codec.h"
#include "cluster/scaleout/group_record.h"
#include "cluster/scaleout/layout.h"
#include "cluster/scaleout/unit_store.h"

namespace nasd::scaleout {

class UnitAccess {
 public:
  virtual ~UnitAccess() = default;
  virtual UnitStatus put(const UnitPlace& at, const UnitKey& key, const uint8_t* data,
                         uint32_t len) = 0;
  virtual UnitStatus get(const UnitPlace& at, const UnitKey& key, std::vector<uint8_t>* out) = 0;
  virtual UnitStatus remove(const UnitPlace& at, const UnitKey& key) = 0;
  virtual UnitStatus sync(const UnitPlace& at) = 0;
  // The orphan sweep's listing: at most `max` (<= kMaxListKeys) keys held on drive `at`, from
  // `from` on in key order; *more when keys are left. Invalid where listing is not offered.
  virtual UnitStatus list(const UnitPlace& at, const UnitKey& from, uint32_t max,
                          std::vector<UnitKey>* out, bool* more) {
    (void)at, (void)from, (void)max;
    out->clear();
    *more = false;
    return UnitStatus::Invalid;
  }
};

// The NodeUnits of this process, by node id. A node marked down answers Unreachable (tests use
// it to stand for a killed node).
class LocalUnits : public UnitAccess {
 public:
  void add(NodeUnits* node);
  void set_down(uint32_t node, bool down);
  UnitStatus put(const UnitPlace& at, const UnitKey& key, const uint8_t* data,
                 uint32_t len) override;
  UnitStatus get(const UnitPlace& at, const UnitKey& key, std::vector<uint8_t>* out) override;
  UnitStatus remove(const UnitPlace& at, const UnitKey& key) override;
  UnitStatus sync(const UnitPlace& at) override;
  UnitStatus list(const UnitPlace& at, const UnitKey& from, uint32_t max, std::vector<UnitKey>* out,
                  bool* more) override;

 private:
  NodeUnits* find(uint32_t node);
  std::mutex mu_;
  std::map<uint32_t, NodeUnits*> nodes_;
  std::map<uint32_t, bool> down_;
};

class GroupIo {
 public:
  explicit GroupIo(UnitAccess* units) : units_(units) {}

  // Shape and places for a new group of `bytes` bytes.
  static bool plan(const ProtectionPolicy& policy, const Topology& topology, uint64_t file,
                   uint64_t group, uint64_t version, uint64_t bytes, GroupRecord* out,
                   std::string* error);
  // Cuts `bytes` bytes at file offset `offset` into groups as wide as `topology` allows (the
  // last may be narrower), versions from `first_version` on.
  static bool plan_extent(const ProtectionPolicy& policy, const Topology& topology,
                          uint64_t file, uint64_t group, uint64_t first_version, uint64_t offset,
                          uint64_t bytes, std::vector<GroupRecord>* out, std::string* error);

  // Writes `data` (record.length bytes) as the group's units, syncing each drive written
  // unless `sync` is false (the write-behind batches: it syncs every drive once per batch with
  // sync_drive before the journal may trim what the batch holds).
  // *failed lists the units that did not land. False when fewer than N landed. A group with
  // failed units is readable but below its protection, and nothing in the record says so:
  // a caller that records it must first land those units (rewrite_units) or not record it.
  bool write_group(const GroupRecord& record, const uint8_t* data, std::vector<int>* failed,
                   std::string* error, bool sync = true);
  // Writes the units `which` of the group again from `data` (the same bytes write_group was
  // given): the same keys with the same content, so a late copy of an earlier attempt that
  // lands after this one is harmless. *failed lists those that still did not land; false
  // then (or on a malformed record or index).
  bool rewrite_units(const GroupRecord& record, const uint8_t* data, const std::vector<int>& which,
                     std::vector<int>* failed, std::string* error, bool sync = true);
  UnitStatus sync_drive(const UnitPlace& drive) { return units_->sync(drive); }
  // Reads the group's bytes into *out (record.length bytes), rebuilding from parity as needed.
  bool read_group(const GroupRecord& record, std::vector<uint8_t>* out, GroupHealth* health,
                  std::string* error);
  // Reads every unit and checks parity against data.
  GroupHealth verify_group(const GroupRecord& record);
  // Rebuilds every unreadable unit (see the header comment). *replacement gets the records
  // that now hold the group's bytes: the same group with new places, or, when the survivors
  // cannot hold its width at full protection (e.g. 6+2/2 with 3 of 4 nodes left), the bytes
  // re-striped into narrower groups under `policy` (same group id, versions from
  // `new_version` on, which the caller guarantees unused; each with its own offset), the old
  // The old units are left in place: the caller deletes them only once the replacement is
  // committed to the metadata (units_superseded). `rebuilt` counts units written. False when more than
  // M units are lost or nothing can be placed; the old record then still holds what is left.
  bool repair_group(const GroupRecord& record, const ProtectionPolicy& policy,
                    const Topology& topology, uint64_t new_version,
                    std::vector<GroupRecord>* replacement, int* rebuilt, std::string* error);
  // Rebalance (protection_job.h): re-stripes the group onto the places rebalance_units picks
  // on `topology`, every unit written under `new_version` (a fresh key: an existing unit is
  // never overwritten or moved under its old key). Data units that cannot be read are rebuilt
  // from parity first, so it also does a scrub's work. *replacement is the new record (or the
  // old one, unchanged, when the group is already balanced: the caller then scrubs it with
  // repair_group). The old units stay until the
  // caller commits. False when the group cannot be read or a new unit cannot be written
  // (the units written are then deleted again).
  bool rebalance_group(const GroupRecord& record, const Topology& topology, uint64_t new_version,
                       std::vector<GroupRecord>* replacement, int* written, std::string* error);
  // Restripe (protection_job.h, OneFS SetProtectPlus): the group's bytes (read, rebuilt from
  // parity as needed) laid out anew under `policy` on `topology`: one or more groups (same
  // group id, versions from `new_version` on, each with its own offset), every unit a fresh
  // key. The old units stay until the caller commits. False when the group cannot be read or
  // a new unit cannot be written (the units written are then deleted again).
  bool restripe_group(const GroupRecord& record, const ProtectionPolicy& policy,
                      const Topology& topology, uint64_t new_version,
                      std::vector<GroupRecord>* replacement, int* written, std::string* error);
  // Deletes every unit of the group (best effort: unreachable units are left as garbage that
  // an orphan sweep by key can remove later).
  void delete_group(const GroupRecord& record);

 private:
  std::shared_ptr<const ErasureCodec> codec(int n, int m);
  // The group's N data units cut from `data` and its M parity units.
  bool encode_units(const GroupRecord& r, const uint8_t* data,
                    std::vector<std::vector<uint8_t>>* units, std::string* error);
  // Puts (and syncs when `sync`) the units `which`; *failed gets those that did not land.
  // False only for a malformed record.
  bool put_units(const GroupRecord& r, const uint8_t* data, const std::vector<int>& which,
                 std::vector<int>* failed, std::string* error, bool sync);
  // Reads all units (parallel); fills bufs and per-unit status.
  void read_units(const GroupRecord& r, const std::vector<int>& which,
                  std::vector<std::vector<uint8_t>>* bufs, std::vector<UnitStatus>* st);

  UnitAccess* units_;
  std::mutex mu_;
  std::map<std::pair<int, int>, std::shared_ptr<const ErasureCodec>> codecs_;
};

}  // namespace nasd::scaleout
