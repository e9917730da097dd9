// A protection policy in OneFS's notation, and what it promises.
//
//   "+Md:Kn"  M parity units per group, tolerating M drive losses or K node losses: at most
//             b = M / K units of one group on a node (OneFS's default "+2d:1n": M 2, b 2).
//   "+Mn"     M parity units, one unit per node (b 1): tolerates M node losses.
//   "N+M/b"   a fixed data width N (e.g. "6+2/2"); "N+M" means b 1.
//
// Invariants of a valid policy: 1 <= M <= kMaxParity, 1 <= b <= M and b divides M (so losing
// floor(M/b) nodes loses at most M units of any group: nothing is lost), N (when fixed) in
// [1, kMaxData]. The data width of a group is chosen per group by the layout (layout.h): as
// wide as the alive nodes allow unless N is fixed, and never wider than N.
#pragma once

#include <string>
#include <string_view>

namespace nasd::scaleout {

constexpr int kMaxData = 16;    // OneFS's widest stripe: 16 data units
constexpr int kMaxParity = 4;   // +4d:... is the strongest parity level offered
constexpr uint32_t kStripeUnit = 128 * 1024;  // bytes per stripe unit

struct ProtectionPolicy {
  int parity = 2;        // M
  int per_node = 2;      // b: at most this many units of one group on one node
  int data_width = 0;    // N when fixed; 0: as wide as the cluster allows (up to kMaxData)

  // Node losses survived without loss: floor(M / b). Drive losses survived: M.
  int node_tolerance() const { return parity / per_node; }
  int drive_tolerance() const { return parity; }
  // OneFS form ("+2d:1n", "+2n") or, with a fixed width, "6+2/2".
  std::string to_string() const;
  bool operator==(const ProtectionPolicy& o) const {
    return parity == o.parity && per_node == o.per_node && data_width == o.data_width;
  }
};

// Parses any of the forms above; on failure returns false and says why in *error.
bool parse_protection_policy(std::string_view text, ProtectionPolicy* out, std::string* error);

// Empty when valid; otherwise what is wrong.
std::string validate(const ProtectionPolicy& p);

}  // namespace nasd::scaleout
