#include "cluster/scaleout/coordination/coord_types.h"

namespace nasd::scaleout::coord {

uint64_t mix64(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

Slot directory_slot(uint64_t parent, const std::string& name, uint64_t counter, uint32_t slots) {
  uint64_t h = mix64(parent ^ mix64(counter));
  for (unsigned char c : name) h = mix64(h ^ c);
  return slots == 0 ? 0 : static_cast<Slot>(h % slots);
}

NodeId designated(Slot slot, const std::vector<NodeId>& alive) {
  NodeId best = 0;
  uint64_t best_score = 0;
  for (NodeId n : alive) {
    const uint64_t score = mix64(mix64(slot) ^ (uint64_t(n) * 0x2545f4914f6cdd1dull));
    if (best == 0 || score > best_score || (score == best_score && n < best)) {
      best = n;
      best_score = score;
    }
  }
  return best;
}

bool merge(Records& into, const Rec& r) {
  auto it = into.find(r.key);
  if (it != into.end() && !(it->second.order() < r.order())) return false;
  into[r.key] = r;
  return true;
}

}  // namespace nasd::scaleout::coord
