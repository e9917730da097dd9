// Volume geometry and the superblock: where the checkpoint regions and segments live.
// See fs/FORMAT.md for the byte layout.
#pragma once

#include <cstdint>
#include <string>

namespace nasd::fs::lfs {

constexpr uint32_t kBlockSize = 4096;
constexpr uint64_t kSuperMagic = 0x3153464c4453414eull;  // "NASDLFS1"
// Version 2 added snapshots (the catalog address in the checkpoint header, record kinds 6 and
// 7). A version-1 volume opens unchanged and becomes version 2 when its first snapshot is taken,
// so that an older nasd, whose cleaner would reclaim snapshot blocks, refuses it.
constexpr uint32_t kFormatVersion = 2;
constexpr uint32_t kFirstFormatVersion = 1;
constexpr uint64_t kRootIno = 1;
// Disk addresses are absolute block numbers; block 0 is the superblock, so 0 means "none".
constexpr uint64_t kNoAddr = 0;

struct Superblock {
  uint32_t version = kFormatVersion;
  uint32_t volume_id = 0;
  uint32_t segment_blocks = 0;  // blocks per segment
  uint32_t nsegments = 0;
  uint64_t cp_block[2] = {0, 0};  // first block of checkpoint region A and B
  uint32_t cp_blocks = 0;         // size of each region
  uint64_t seg0_block = 0;        // first block of segment 0
  uint64_t max_inodes = 0;
  int64_t created_sec = 0;
  uint64_t uuid = 0;

  uint64_t segment_start(uint32_t seg) const { return seg0_block + uint64_t(seg) * segment_blocks; }
  // The segment holding block `addr`, or nsegments when it is outside every segment.
  uint32_t segment_of(uint64_t addr) const {
    if (addr < seg0_block) return nsegments;
    uint64_t s = (addr - seg0_block) / segment_blocks;
    return s < nsegments ? uint32_t(s) : nsegments;
  }
  uint64_t segment_bytes() const { return uint64_t(segment_blocks) * kBlockSize; }
};

// Computes the layout for a device of `bytes` with `segment_bytes` segments. Returns false
// (with a reason) when the sizes cannot hold a usable volume.
bool plan_layout(uint64_t bytes, uint64_t segment_bytes, uint32_t volume_id, Superblock* sb,
                 std::string* why);

void encode_superblock(const Superblock& sb, uint8_t* block);
bool decode_superblock(const uint8_t* block, Superblock* sb, std::string* why);

}  // namespace nasd::fs::lfs
