// Direct reads of the scale-out volume: any node answers a READ by asking the coordinator only
// *where* the bytes are (a read layout), then reading the groups' units itself, from the nodes
// that hold them, in parallel (issue 14: "data units are read on the nodes that hold them").
// The coordinator's answer is small (group records, plus the bytes of slots it still holds
// dirty in memory), so the data no longer crosses the interconnect twice (holders ->
// coordinator -> the client's node) and the coordinator no longer decodes every read.
//
// Why a layout needs no lease or lock (the protocol's safety argument, tested by
// IfsDirectRead.* with random interleavings of writes, flushes, truncates, removes, garbage
// deletion and node loss between the layout and the unit reads):
//   * a layout is taken under the coordinator's lock, so it is exactly what a READ on the
//     coordinator would have returned at that instant: the bytes of dirty slots inline, and for
//     every other slot the group records the catalog held (zeros where there are none);
//   * a unit key (file, group, version, index) never holds two different contents (every write,
//     re-protect or rebalance writes a fresh version), and every unit carries a checksum;
//   * so reading a layout's units later yields either exactly the bytes of that instant (a
//     group whose old units are partly deleted meanwhile is rebuilt from the units left, all of
//     the same version) or a failure (too many deleted or lost): the reader then asks again,
//     and after a few failures falls back to the forwarded READ.
// A READ concurrent with a WRITE may return either content, as on any NFS server; a READ that
// starts after a WRITE was acknowledged asks for its layout after the acknowledgement, so it
// sees the write (from the dirty slot or the groups the flush installed).
//
// The coordinator must still hold the volume when it answers: the serving node checks its
// lease after taking the layout (a node whose lease ran out answers JUKEBOX, the reader falls
// back to the forwarded path, which reaches the new owner).
//
// Wire form (interconnect MessageType::IfsReadLayout), little-endian, bounded:
//   request: u8 version(1) | the READ call in the one Volume call encoding (fs/call/codec.h)
//   reply:   u8 version(1) | READ reply in that encoding (status, attr, eof; no data) |
//            u64 offset | u32 length (<= kMaxLayoutBytes) |
//            u32 pieces (<= kMaxLayoutPieces) × {u64 offset, u32 n (<= kSlotBytes), n bytes} |
//            u32 records (<= kMaxLayoutRecords) × {u64 file, group, version, offset, length,
//            u8 data, u8 parity, u8 per_node, u8 under_protected, width × {u32 node, u16 drive}}
//   Every piece and record must lie inside [offset, offset + length) in part at least; a
//   decoder refuses anything else, and trailing bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cluster/scaleout/group_record.h"
#include "fs/volume.h"

namespace nasd::scaleout {

constexpr uint32_t kMaxLayoutBytes = 8u << 20;
constexpr uint32_t kMaxLayoutPieces = 64;
constexpr uint32_t kMaxLayoutRecords = 256;

// Bytes the coordinator still holds in memory (a dirty slot's part in the range).
struct LayoutPiece {
  uint64_t offset = 0;
  std::vector<uint8_t> bytes;
};

struct ReadLayout {
  fs::Status status = fs::Status::ServerFault;
  std::optional<fs::Attr> attr;
  bool eof = false;
  uint64_t offset = 0;   // the answer covers [offset, offset + length): zeros, then the
  uint32_t length = 0;   // records' bytes, then the pieces
  std::vector<LayoutPiece> pieces;
  std::vector<GroupRecord> records;
};

struct LayoutRequest {
  uint32_t volume_id = 0;
  fs::OpContext ctx;
  fs::InodeId id;
  uint64_t offset = 0;
  uint32_t count = 0;
};

std::vector<uint8_t> encode_layout_request(const LayoutRequest& r);
bool decode_layout_request(std::span<const uint8_t> in, LayoutRequest* out);
std::vector<uint8_t> encode_layout_reply(const ReadLayout& l);
bool decode_layout_reply(std::span<const uint8_t> in, ReadLayout* out);

// The READ's bytes from a layout and the bytes of each of its records (groups[i] for
// records[i], record.length bytes). False when a group's bytes are short.
bool assemble_read(const ReadLayout& layout, const std::vector<std::span<const uint8_t>>& groups,
                   std::vector<uint8_t>* out);

// Fuzzing entry point: decodes `data` as a request and as a reply; whatever decodes must
// re-encode to the same bytes. Aborts on a violated invariant.
int fuzz_layout_codec(const uint8_t* data, size_t size);

}  // namespace nasd::scaleout
