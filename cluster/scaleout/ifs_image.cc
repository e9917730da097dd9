#include "cluster/scaleout/ifs_image.h"

#include "util/crc32c.h"

#include <algorithm>
#include <future>

namespace nasd::scaleout {
namespace {

constexpr uint64_t kHeadMagic = 0x3144414548534649ull;  // "IFSHEAD1"
constexpr uint32_t kHeadBytes = 32;
constexpr uint32_t kMaxChunks = 1u << 20;

uint32_t crc_of(const std::vector<uint8_t>& v) {
  return util::crc32c_register(0, v.data(), v.size());
}

void put64(uint8_t* p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = uint8_t(v >> (8 * i)); }
uint64_t get64(const uint8_t* p) { uint64_t v = 0; for (int i = 0; i < 8; i++) v |= uint64_t(p[i]) << (8 * i); return v; }

UnitKey head_key() { return UnitKey{kMetadataFile, 0, 0, 0}; }
UnitKey chunk_key(uint64_t generation, uint32_t i) { return UnitKey{kMetadataFile, 1ull + i, generation, 0}; }
std::vector<uint32_t> chunk_drives(uint64_t generation, uint32_t i, uint32_t drives) {
  uint32_t a = static_cast<uint32_t>((generation + i) % drives);
  if (drives == 1) return {a};
  return {a, (a + 1) % drives};
}
int majority(const Topology& t) { return static_cast<int>(t.nodes.size()) / 2 + 1; }

}  // namespace

bool write_image(UnitAccess* units, const Topology& topology, uint32_t drives,
                 uint64_t generation, uint64_t previous, const std::vector<uint8_t>& image,
                 std::string* why) {
  const uint32_t chunks = static_cast<uint32_t>((image.size() + kStripeUnit - 1) / kStripeUnit);
  std::vector<uint8_t> head(kHeadBytes, 0);
  put64(head.data(), kHeadMagic);
  put64(head.data() + 8, generation);
  put64(head.data() + 16, image.size());
  put64(head.data() + 24, uint64_t(chunks) | uint64_t(crc_of(image)) << 32);
  // One task per alive node: its chunks, a sync, then its heads.
  std::vector<std::future<bool>> per_node;
  for (const NodeState& n : topology.nodes) {
    if (!n.alive) continue;
    per_node.push_back(std::async(std::launch::async, [&, node = n.id]() {
      for (uint32_t i = 0; i < chunks; i++) {
        const size_t at = size_t(i) * kStripeUnit;
        const uint32_t len = static_cast<uint32_t>(std::min<size_t>(kStripeUnit, image.size() - at));
        bool any = false;
        for (uint32_t d : chunk_drives(generation, i, drives))
          any |= units->put(UnitPlace{node, d}, chunk_key(generation, i), image.data() + at, len) == UnitStatus::Ok;
        if (!any) return false;
      }
      for (uint32_t d = 0; d < drives; d++) units->sync(UnitPlace{node, d});
      int heads = 0;
      for (uint32_t d = 0; d < drives; d++) {
        if (units->put(UnitPlace{node, d}, head_key(), head.data(), kHeadBytes) == UnitStatus::Ok &&
            units->sync(UnitPlace{node, d}) == UnitStatus::Ok)
          ++heads;
      }
      return heads > 0;
    }));
  }
  int landed = 0;
  for (auto& f : per_node) landed += f.get() ? 1 : 0;
  if (landed < majority(topology)) {
    *why = "metadata checkpoint reached " + std::to_string(landed) + " node(s), a majority of " +
           std::to_string(topology.nodes.size()) + " is needed";
    return false;
  }
  if (previous != 0 && previous != generation) {
    // The old generation's chunk count is not kept; its chunks are at most as many as now plus
    // the growth of one checkpoint, and a missing key is harmless.
    for (const NodeState& n : topology.nodes) {
      if (!n.alive) continue;
      for (uint32_t i = 0; i < chunks + 8; i++)
        for (uint32_t d : chunk_drives(previous, i, drives))
          units->remove(UnitPlace{n.id, d}, chunk_key(previous, i));
    }
  }
  return true;
}

ImageLoad read_image(UnitAccess* units, const Topology& topology, uint32_t drives,
                     std::vector<uint8_t>* image, ImageHead* best, std::string* why) {
  struct NodeAnswer {
    bool answered = false;
    ImageHead head;
  };
  std::vector<std::future<NodeAnswer>> asks;
  for (const NodeState& n : topology.nodes) {
    asks.push_back(std::async(std::launch::async, [&, node = n.id]() {
      NodeAnswer a;
      for (uint32_t d = 0; d < drives; d++) {
        std::vector<uint8_t> h;
        UnitStatus st = units->get(UnitPlace{node, d}, head_key(), &h);
        if (st == UnitStatus::Unreachable) return a;
        if (st == UnitStatus::Ok || st == UnitStatus::NotFound || st == UnitStatus::DriveFailed ||
            st == UnitStatus::Corrupt)
          a.answered = true;
        if (st != UnitStatus::Ok || h.size() != kHeadBytes || get64(h.data()) != kHeadMagic) continue;
        ImageHead head;
        head.generation = get64(h.data() + 8);
        head.bytes = get64(h.data() + 16);
        head.chunks = static_cast<uint32_t>(get64(h.data() + 24));
        head.crc = static_cast<uint32_t>(get64(h.data() + 24) >> 32);
        if (head.generation > a.head.generation) a.head = head;
      }
      return a;
    }));
  }
  int answered = 0;
  *best = ImageHead{};
  for (auto& f : asks) {
    NodeAnswer a = f.get();
    if (!a.answered) continue;
    ++answered;
    if (a.head.generation > best->generation) *best = a.head;
  }
  if (answered < majority(topology)) {
    *why = std::to_string(answered) + " of " + std::to_string(topology.nodes.size()) +
           " nodes answered; a majority is needed to find the newest metadata";
    return ImageLoad::NoQuorum;
  }
  if (best->generation == 0) return ImageLoad::Empty;
  if (best->chunks > kMaxChunks || best->bytes > uint64_t(best->chunks) * kStripeUnit) {
    *why = "metadata head out of bounds";
    return ImageLoad::Damaged;
  }
  image->assign(best->bytes, 0);
  for (uint32_t i = 0; i < best->chunks; i++) {
    const size_t at = size_t(i) * kStripeUnit;
    const size_t len = std::min<size_t>(kStripeUnit, best->bytes - at);
    bool got = false;
    for (const NodeState& n : topology.nodes) {
      for (uint32_t d : chunk_drives(best->generation, i, drives)) {
        std::vector<uint8_t> c;
        if (units->get(UnitPlace{n.id, d}, chunk_key(best->generation, i), &c) == UnitStatus::Ok &&
            c.size() == len) {
          std::copy(c.begin(), c.end(), image->begin() + static_cast<long>(at));
          got = true;
          break;
        }
      }
      if (got) break;
    }
    if (!got) {
      *why = "metadata chunk " + std::to_string(i) + " of generation " +
             std::to_string(best->generation) + " is on no reachable drive";
      return ImageLoad::Damaged;
    }
  }
  if (crc_of(*image) != best->crc) {
    *why = "metadata image checksum mismatch";
    return ImageLoad::Damaged;
  }
  return ImageLoad::Found;
}

}  // namespace nasd::scaleout
