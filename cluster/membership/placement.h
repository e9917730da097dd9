// Where every EVS and volume of an N-node cluster belongs, as recorded at the lease authority
// (the shared folder or etcd: placement_store.h), and the planned moves between nodes.
//
// The record names, for every EVS, its *designated* node, and for every volume its EVS; a
// volume's designated node is its EVS's. ClusterMember serves what is designated to it (or to a
// dead node it covers), so changing the record is what moves things. A move is two steps:
//   1. propose (the admin): the EVS gets a `target` node, or the volume a `target_evs`. Nothing
//      else changes: the volumes stay designated where they were.
//   2. hand over (the node serving each volume of the move, under that volume's lease): it
//      closes the volume cleanly (every acknowledged operation flushed, nothing left in its
//      NVRAM that the next owner would need), then marks it `handed` at the authority, and only
//      then releases the lease. When the last volume of the move is marked, the same update
//      commits it: the EVS's node (or the volume's EVS) becomes the target.
// A handed volume is wanted by nobody until the commit (nobody needs to replay anything for
// it, and no node may open it meanwhile), so the new owner opens it without a replay. If a
// serving node dies before it handed its volume over, its covering node takes that volume over
// the usual way (with the replay) and then hands it over itself: a move completes as long as
// someone can serve its volumes, or the admin cancels it (roll back: the handed volumes are
// clean, so their designated node opens them again).
//
// Pure data and rules: no I/O. The text form is input from the authority (etcd is a network
// service), so the decoder bounds every count and length and never guesses.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nasd::membership {

constexpr size_t kMaxPlacementBytes = 16 * 1024;
constexpr size_t kMaxPlacementName = 64;
constexpr size_t kMaxPlacementEvs = 64;
constexpr size_t kMaxPlacementVolumes = 1024;
constexpr size_t kMaxPlacementStaleMirrors = 64;

struct Placement {
  struct Evs {
    std::string node;    // designated node
    std::string target;  // a move in progress to this node ("" none)
  };
  struct Volume {
    std::string evs;
    std::string target_evs;  // a volume move in progress ("" none)
    bool handed = false;     // closed cleanly by its server for the move in progress
  };
  // A node's NVRAM mirror that is out of date (stale_mirror_mark.h): the node acknowledged
  // stable writes its mirror partner does not hold, from journal position `since` on. The
  // partner must not take the node's volumes over from that copy while the mark stands.
  struct StaleMirror {
    std::string partner;  // where the mirror is
    uint64_t since = 0;   // the first journal position the partner may lack
  };
  uint64_t version = 0;  // the store's version of this record (0: not stored yet)
  std::map<std::string, Evs> evs;
  std::map<uint32_t, Volume> volumes;
  std::map<std::string, StaleMirror> stale_mirrors;  // by the node whose mirror is stale

  // The mirror of `node`'s NVRAM may lack acknowledged writes: no takeover from it.
  bool mirror_stale(const std::string& node) const { return stale_mirrors.count(node) > 0; }

  bool has(uint32_t volume) const { return volumes.count(volume) > 0; }
  // The node that should serve the volume ("" if the volume is unknown).
  std::string designated(uint32_t volume) const;
  // A move of this volume (by itself or with its EVS) is in progress.
  bool moving(uint32_t volume) const;
  // Where it is moving to (its node after the commit); "" when not moving.
  std::string destination(uint32_t volume) const;
  bool handed(uint32_t volume) const;
  // The volumes that commit together with this one (its EVS's for an EVS move).
  std::vector<uint32_t> unit(uint32_t volume) const;
  std::vector<uint32_t> volumes_of(const std::string& evs) const;
  // One line per pending move, for status: "evs evs1 n1 -> n3 (1 of 2 volumes handed over)".
  std::vector<std::string> pending_moves() const;
  bool operator==(const Placement& o) const;
};

// The placement the cluster config describes (nothing moving).
Placement initial_placement(const std::map<std::string, std::string>& evs_node,
                            const std::map<uint32_t, std::string>& volume_evs);

// The stored record adapted to the config in force: EVSes and volumes the config no longer has
// are dropped, new ones are added where the config puts them; `version` is kept.
Placement reconcile(const Placement& stored, const Placement& from_config);

// ---- the changes; each returns "" when done, or why not (and leaves `p` unchanged) ----
// `nodes`: every member of the cluster.
std::string propose_evs_move(Placement& p, const std::string& evs, const std::string& node,
                             const std::vector<std::string>& nodes);
std::string propose_volume_move(Placement& p, uint32_t volume, const std::string& evs);
// Marks a volume handed over; commits the move when its whole unit is.
std::string mark_handed(Placement& p, uint32_t volume);
// Gives up the pending move of an EVS (by name) or of a volume.
std::string cancel_evs_move(Placement& p, const std::string& evs);
std::string cancel_volume_move(Placement& p, uint32_t volume);

// The stale-mirror marks: set by the node itself before its first unmirrored acknowledgement,
// cleared by it once its mirror caught up, or by the admin who accepts losing those writes.
std::string mark_mirror_stale(Placement& p, const std::string& node, const std::string& partner,
                              uint64_t since);
std::string clear_mirror_stale(Placement& p, const std::string& node);

// Text form (without the version):
//   nasd-placement 1
//   evs NAME NODE TARGET|-
//   volume ID EVS TARGET_EVS|- handed|-
//   stale-mirror NODE PARTNER SINCE
std::string encode_placement(const Placement& p);
bool decode_placement(const std::string& text, Placement* out, std::string* error);

}  // namespace nasd::membership
