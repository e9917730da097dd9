// The placement record's decoder (cluster/membership/placement.h): its text comes from the lease
// authority (etcd is a network service). Arbitrary bytes must be refused or decode to a record
// whose text decodes to the same record again, and the rules must hold on whatever decoded.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cluster/membership/placement.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nasd::membership;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Placement p;
  std::string error;
  if (!decode_placement(text, &p, &error)) return 0;
  if (p.evs.size() > kMaxPlacementEvs || p.volumes.size() > kMaxPlacementVolumes ||
      p.stale_mirrors.size() > kMaxPlacementStaleMirrors)
    __builtin_trap();
  for (const auto& [node, m] : p.stale_mirrors)
    if (node == m.partner || !p.mirror_stale(node)) __builtin_trap();
  Placement again;
  if (!decode_placement(encode_placement(p), &again, &error) || !(again == p)) __builtin_trap();
  for (const auto& [id, v] : p.volumes) {
    if (p.designated(id).empty()) __builtin_trap();
    (void)p.unit(id);
    if (p.moving(id)) {
      Placement next = p;
      if (!mark_handed(next, id).empty()) __builtin_trap();
      Placement check;
      if (!decode_placement(encode_placement(next), &check, &error)) __builtin_trap();
    }
  }
  (void)p.pending_moves();
  return 0;
}
