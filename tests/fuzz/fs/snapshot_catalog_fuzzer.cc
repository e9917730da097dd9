// libFuzzer target: arbitrary bytes as a snapshot catalog block and as a snapshot table block.
// The input is padded to one block and its CRC is made to match (the first byte says whether),
// so the fuzzer reaches the field checks behind the checksum. Whatever decodes must respect the
// limits the store relies on and survive an encode/decode round trip unchanged.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fs/lfs/checksum.h"
#include "fs/lfs/endian.h"
#include "fs/lfs/snapshot_catalog.h"

using namespace nasd::fs::lfs;

namespace {

void fix_crc(uint8_t* block) {
  put32(block + 4, 0);
  put32(block + 4, crc32c(block, kBlockSize));
}

void catalog(const uint8_t* block) {
  SnapshotCatalog cat;
  if (!decode_catalog(block, &cat)) return;
  if (cat.snapshots.size() > kMaxSnapshots || cat.next_id == 0) __builtin_trap();
  for (const SnapshotInfo& s : cat.snapshots)
    if (!valid_snapshot_name(s.name) || s.id == 0 || s.id >= cat.next_id) __builtin_trap();
  std::vector<uint8_t> again(kBlockSize);
  encode_catalog(cat, again.data());
  SnapshotCatalog back;
  if (!decode_catalog(again.data(), &back) || back.snapshots.size() != cat.snapshots.size() ||
      back.next_id != cat.next_id)
    __builtin_trap();
  for (size_t i = 0; i < cat.snapshots.size(); i++)
    if (back.snapshots[i].name != cat.snapshots[i].name ||
        back.snapshots[i].table != cat.snapshots[i].table)
      __builtin_trap();
}

void table(const uint8_t* block) {
  uint32_t id;
  uint64_t next;
  std::vector<uint64_t> addrs;
  if (!decode_table_block(block, &id, &addrs, &next)) return;
  if (addrs.size() > kTableAddrsPerBlock) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  bool seal = data[0] & 1;
  std::vector<uint8_t> block(kBlockSize, 0);
  std::memcpy(block.data(), data + 1, std::min(size - 1, size_t(kBlockSize)));
  std::vector<uint8_t> as_table = block;
  if (seal) {
    fix_crc(block.data());
    fix_crc(as_table.data());
  }
  catalog(block.data());
  table(as_table.data());
  return 0;
}
