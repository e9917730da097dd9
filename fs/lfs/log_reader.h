// Reads units back from the log and verifies them: the summary checksum and every block's
// checksum. Used by roll-forward recovery, the cleaner and fsck.
#pragma once

#include <cstdint>
#include <vector>

#include "fs/lfs/block_device.h"
#include "fs/lfs/summary.h"

namespace nasd::fs::lfs {

struct LogUnit {
  uint32_t seg = 0, off = 0;  // position of the summary block
  Summary summary;
  std::vector<uint8_t> blocks;  // nblocks * kBlockSize, in record order
  const uint8_t* block(size_t i) const { return blocks.data() + i * kBlockSize; }
  uint32_t end_off() const { return off + 1 + summary.nblocks(); }
  // Disk address of the i-th block of the unit.
  uint64_t block_addr(const Superblock& sb, size_t i) const {
    return sb.segment_start(seg) + off + 1 + i;
  }
};

// Reads the unit at (seg, off) from the device; false unless it is complete and intact.
bool read_unit(BlockDevice& dev, const Superblock& sb, uint32_t seg, uint32_t off, LogUnit* out);
// Same, from an in-memory image of the whole segment.
bool parse_unit(const uint8_t* segment, const Superblock& sb, uint32_t seg, uint32_t off,
                LogUnit* out);

}  // namespace nasd::fs::lfs
