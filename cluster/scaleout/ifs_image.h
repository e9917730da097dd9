// Where the scale-out volume's metadata checkpoint lives: on the drives of every node, mirrored
// (metadata is protected one level more than data: a copy on every node, two drives each, where
// data groups survive two drive or one node losses).
//
//   head   key (file 0, group 0, version 0, index 0) on every drive of every node, rewritten
//          in place at each checkpoint: {magic, generation, image bytes, chunks, CRC32C}.
//   image  the encoded IfsState (ifs_state.h) in chunks of at most one stripe unit, chunk i at
//          key (file 0, group 1 + i, version = generation, index 0), on two drives per node.
//
// Order, and why it is safe: the chunks are written and synced first, then the heads; a
// checkpoint counts only once a majority of the nodes hold its head and every chunk, so any
// majority of nodes that answer at the next open includes one with the newest head. The
// previous generation's chunks are deleted only after the new heads landed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/scaleout/group_io.h"
#include "cluster/scaleout/ifs_state.h"
#include "cluster/scaleout/layout.h"

namespace nasd::scaleout {

struct ImageHead {
  uint64_t generation = 0;
  uint64_t bytes = 0;
  uint32_t chunks = 0;
  uint32_t crc = 0;
};

// Writes `image` as checkpoint `generation` to the alive nodes of `topology`; deletes
// generation `previous` (0: none) afterwards. False (and why) when no majority holds it.
bool write_image(UnitAccess* units, const Topology& topology, uint32_t drives,
                 uint64_t generation, uint64_t previous, const std::vector<uint8_t>& image,
                 std::string* why);

enum class ImageLoad { Found, Empty, NoQuorum, Damaged };
// Reads the newest checkpoint any node holds. Empty: a majority of nodes answered and none
// holds a head (a new volume). NoQuorum: too few nodes answered to be sure.
ImageLoad read_image(UnitAccess* units, const Topology& topology, uint32_t drives,
                     std::vector<uint8_t>* image, ImageHead* head, std::string* why);

}  // namespace nasd::scaleout
