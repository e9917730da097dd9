// The snapshot catalog: which snapshots a volume retains and where each one's inode map lives.
// A snapshot is a retained checkpoint: the inode map block addresses of the checkpoint taken
// for it, written to the log in a chain of *table blocks*, plus its name, time and next inode
// number. Nothing else is copied: the imap blocks, inode blocks, block-map nodes and data of
// that checkpoint are the snapshot, and the segment table keeps every segment holding one of
// them out of the cleaner's reach until the snapshot is deleted (see SegmentTable::set_pinned).
//
// The catalog is one block in the log (record kind Catalog) whose address the checkpoint
// header records; it changes only at a checkpoint, so a snapshot exists exactly when a durable
// checkpoint lists it (create and delete are atomic across crashes). See fs/FORMAT.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fs/lfs/layout.h"

namespace nasd::fs::lfs {

// Catalog entries are 96 bytes in one block; 40 leaves room to spare (hourly:24 + daily:7 +
// weekly:4 fits).
constexpr size_t kMaxSnapshots = 40;
constexpr size_t kMaxSnapshotName = 60;
// Inode map block addresses per table block.
constexpr size_t kTableAddrsPerBlock = (kBlockSize - 32) / 8;

struct SnapshotInfo {
  uint32_t id = 0;           // >= 1, never reused (see snapshot_ids.h)
  std::string name;          // 1..kMaxSnapshotName bytes, no '/', not "." or ".."
  int64_t time = 0;          // seconds, when it was taken
  uint64_t next_ino = 0;     // the snapshot's inode map size
  uint32_t imap_blocks = 0;  // number of inode map block addresses in the table
  uint64_t table = kNoAddr;  // first table block
};

struct SnapshotCatalog {
  uint32_t next_id = 1;
  std::vector<SnapshotInfo> snapshots;  // oldest first

  const SnapshotInfo* find(const std::string& name) const;
  const SnapshotInfo* find_id(uint32_t id) const;
};

// A name a snapshot may have: a single path component a client can type.
bool valid_snapshot_name(const std::string& name);

void encode_catalog(const SnapshotCatalog& cat, uint8_t* block);
bool decode_catalog(const uint8_t* block, SnapshotCatalog* cat);

// Table block `index` of snapshot `id`: `addrs` (at most kTableAddrsPerBlock) and the address
// of the next table block (kNoAddr at the end of the chain).
void encode_table_block(uint32_t id, const uint64_t* addrs, size_t count, uint64_t next,
                        uint8_t* block);
bool decode_table_block(const uint8_t* block, uint32_t* id, std::vector<uint64_t>* addrs,
                        uint64_t* next);

}  // namespace nasd::fs::lfs
