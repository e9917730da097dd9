#include "fs/lfs/snapshot_catalog.h"

#include <cstring>

#include "fs/lfs/checksum.h"
#include "fs/lfs/endian.h"

namespace nasd::fs::lfs {

namespace {
constexpr uint32_t kCatalogMagic = 0x4e53464c;  // "LFSN"
constexpr uint32_t kTableMagic = 0x5453464c;    // "LFST"
constexpr size_t kHeader = 32;
constexpr size_t kEntryBytes = 96;
static_assert(kHeader + kMaxSnapshots * kEntryBytes <= kBlockSize);

void seal(uint8_t* block) {
  put32(block + 4, 0);
  put32(block + 4, crc32c(block, kBlockSize));
}

bool sealed(const uint8_t* block, uint32_t magic) {
  if (get32(block) != magic) return false;
  uint8_t copy[kBlockSize];
  std::memcpy(copy, block, kBlockSize);
  put32(copy + 4, 0);
  return crc32c(copy, kBlockSize) == get32(block + 4);
}
}  // namespace

const SnapshotInfo* SnapshotCatalog::find(const std::string& name) const {
  for (const auto& s : snapshots)
    if (s.name == name) return &s;
  return nullptr;
}

const SnapshotInfo* SnapshotCatalog::find_id(uint32_t id) const {
  for (const auto& s : snapshots)
    if (s.id == id) return &s;
  return nullptr;
}

bool valid_snapshot_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxSnapshotName || name == "." || name == "..") return false;
  for (unsigned char c : name)
    if (c == '/' || c < 0x20 || c == 0x7f) return false;
  return true;
}

void encode_catalog(const SnapshotCatalog& cat, uint8_t* block) {
  std::memset(block, 0, kBlockSize);
  Encoder e(block);
  e.u32(kCatalogMagic);
  e.u32(0);
  e.u32(uint32_t(cat.snapshots.size()));
  e.u32(cat.next_id);
  for (size_t i = 0; i < cat.snapshots.size() && i < kMaxSnapshots; i++) {
    const SnapshotInfo& s = cat.snapshots[i];
    uint8_t* p = block + kHeader + i * kEntryBytes;
    Encoder x(p);
    x.u32(s.id);
    x.u32(s.imap_blocks);
    x.u64(uint64_t(s.time));
    x.u64(s.next_ino);
    x.u64(s.table);
    p[32] = uint8_t(s.name.size());
    std::memcpy(p + 36, s.name.data(), std::min(s.name.size(), kMaxSnapshotName));
  }
  seal(block);
}

bool decode_catalog(const uint8_t* block, SnapshotCatalog* cat) {
  if (!sealed(block, kCatalogMagic)) return false;
  Decoder d(block + 8);
  uint32_t count = d.u32();
  cat->next_id = d.u32();
  if (count > kMaxSnapshots || cat->next_id == 0) return false;
  cat->snapshots.clear();
  for (uint32_t i = 0; i < count; i++) {
    const uint8_t* p = block + kHeader + i * kEntryBytes;
    Decoder x(p);
    SnapshotInfo s;
    s.id = x.u32();
    s.imap_blocks = x.u32();
    s.time = int64_t(x.u64());
    s.next_ino = x.u64();
    s.table = x.u64();
    size_t len = p[32];
    if (len > kMaxSnapshotName) return false;
    s.name.assign(reinterpret_cast<const char*>(p + 36), len);
    if (s.id == 0 || s.id >= cat->next_id || !valid_snapshot_name(s.name)) return false;
    cat->snapshots.push_back(std::move(s));
  }
  return true;
}

void encode_table_block(uint32_t id, const uint64_t* addrs, size_t count, uint64_t next,
                        uint8_t* block) {
  std::memset(block, 0, kBlockSize);
  Encoder e(block);
  e.u32(kTableMagic);
  e.u32(0);
  e.u32(id);
  e.u32(uint32_t(count));
  e.u64(next);
  Encoder body(block + 32);
  for (size_t i = 0; i < count && i < kTableAddrsPerBlock; i++) body.u64(addrs[i]);
  seal(block);
}

bool decode_table_block(const uint8_t* block, uint32_t* id, std::vector<uint64_t>* addrs,
                        uint64_t* next) {
  if (!sealed(block, kTableMagic)) return false;
  Decoder d(block + 8);
  *id = d.u32();
  uint32_t count = d.u32();
  *next = d.u64();
  if (count > kTableAddrsPerBlock) return false;
  Decoder body(block + 32);
  for (uint32_t i = 0; i < count; i++) addrs->push_back(body.u64());
  return true;
}

}  // namespace nasd::fs::lfs
