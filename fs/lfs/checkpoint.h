// Checkpoints: the complete durable state of the volume at one log position (inode map block
// addresses, segment usage, log head). Two regions alternate; the valid one with the higher
// sequence number wins, so a checkpoint torn by a crash costs only roll-forward time.
#pragma once

#include <cstdint>
#include <vector>

#include "fs/lfs/layout.h"

namespace nasd::fs::lfs {

struct SegmentUsage {
  uint32_t live_bytes = 0;
  int64_t mtime = 0;  // newest write into the segment (cleaner age)
  bool pinned = false;  // holds a block of a retained snapshot (see SegmentTable::set_pinned)
};

struct LogPosition {
  uint32_t seg = 0;
  uint32_t off = 0;        // block offset of the next unit inside `seg`
  uint32_t next_seg = 0;   // segment the log continues in once `seg` is full
  uint64_t lsn = 1;        // sequence number the next unit gets
  uint32_t prev_crc = 0;   // summary CRC of the unit before it (chains units together)
};

struct Checkpoint {
  uint64_t seq = 0;
  LogPosition head;
  uint64_t durable_jseq = 0;
  uint64_t next_ino = kRootIno + 1;
  int64_t time = 0;
  uint64_t catalog_addr = kNoAddr;   // snapshot catalog block (format 2; 0 = no snapshots)
  std::vector<uint64_t> imap_addrs;  // one per imap block, kNoAddr when never written
  std::vector<SegmentUsage> sut;     // one per segment
};

// Serializes into whole blocks; the result fits the region size computed by plan_layout.
std::vector<uint8_t> encode_checkpoint(const Checkpoint& cp);
// False when the bytes are not a complete, checksummed checkpoint for this geometry.
bool decode_checkpoint(const uint8_t* data, size_t len, const Superblock& sb, Checkpoint* cp);

}  // namespace nasd::fs::lfs
