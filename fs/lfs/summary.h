// Segment summaries: the first block of every partial segment ("unit") names the owner and
// role of each block that follows, so recovery, the cleaner and fsck can interpret the log
// without any other index. Units are chained by LSN and the previous unit's summary CRC.
#pragma once

#include <cstdint>
#include <vector>

#include "fs/lfs/layout.h"

namespace nasd::fs::lfs {

enum class RecordKind : uint16_t {
  Data = 1,        // file/directory/symlink data block: offset = logical block number
  Node = 2,        // block-map indirect node: offset = node key (see block_map.h)
  InodeBlock = 3,  // packed inodes: offset = number of inodes in the block
  ImapBlock = 4,   // inode map block: offset = imap block index
  InodeFree = 5,   // no block: inode `ino` (generation `gen`) was freed
  SnapTable = 6,   // a snapshot's inode map table block: ino = snapshot id, offset = index
  Catalog = 7,     // the snapshot catalog (see snapshot_catalog.h)
};

struct SummaryRecord {
  RecordKind kind = RecordKind::Data;
  uint64_t ino = 0;
  uint32_t gen = 0;
  uint64_t offset = 0;
  uint32_t block_crc = 0;
  bool has_block() const { return kind != RecordKind::InodeFree; }
};

// Unit flags.
constexpr uint32_t kUnitGroupEnd = 1;  // the last unit of an atomic group of units

struct Summary {
  uint64_t lsn = 0;
  uint32_t prev_crc = 0;
  uint64_t journal_seq = 0;  // highest journal sequence (fs::JournalTag::seq) the group completes
  uint32_t next_seg = 0;
  uint32_t flags = 0;
  int64_t time = 0;
  std::vector<SummaryRecord> records;
  uint32_t crc = 0;  // of the encoded summary block; set by encode/decode

  uint32_t nblocks() const;
};

constexpr size_t kSummaryHeader = 64;
constexpr size_t kSummaryRecordBytes = 32;
constexpr size_t kMaxRecords = (kBlockSize - kSummaryHeader) / kSummaryRecordBytes;

// Writes the summary into one block and stores its CRC in `s->crc`.
void encode_summary(Summary* s, uint8_t* block);
// False when the block is not an intact summary.
bool decode_summary(const uint8_t* block, Summary* s);

}  // namespace nasd::fs::lfs
