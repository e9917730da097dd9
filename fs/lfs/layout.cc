#include "fs/lfs/layout.h"

#include <cstring>
#include <ctime>
#include <random>

#include "fs/lfs/checksum.h"
#include "fs/lfs/endian.h"

namespace nasd::fs::lfs {

namespace {
constexpr uint32_t kMinSegments = 8;
constexpr uint64_t kMaxInodes = 1ull << 26;
// Bytes of a checkpoint: header, one imap block address per 256 inodes, 16 bytes per segment.
constexpr uint32_t kCheckpointHeader = 128;
constexpr uint32_t kImapPerBlock = 256;
constexpr uint32_t kSutEntry = 16;
}  // namespace

bool plan_layout(uint64_t bytes, uint64_t segment_bytes, uint32_t volume_id, Superblock* sb,
                 std::string* why) {
  if (segment_bytes < 16 * kBlockSize || segment_bytes % kBlockSize != 0 ||
      segment_bytes > (1ull << 31)) {
    *why = "segment size must be a multiple of 4 KiB between 64 KiB and 2 GiB";
    return false;
  }
  uint64_t total_blocks = bytes / kBlockSize;
  uint32_t seg_blocks = uint32_t(segment_bytes / kBlockSize);
  uint64_t approx_segs = total_blocks / seg_blocks;
  if (approx_segs < kMinSegments + 2) {
    *why = "volume too small: needs at least " + std::to_string(kMinSegments + 2) + " segments";
    return false;
  }
  uint64_t max_inodes = std::min<uint64_t>(total_blocks, kMaxInodes);
  uint64_t imap_blocks = (max_inodes + kImapPerBlock - 1) / kImapPerBlock;
  uint64_t cp_bytes = kCheckpointHeader + imap_blocks * 8 + approx_segs * kSutEntry;
  uint32_t cp_blocks = uint32_t((cp_bytes + kBlockSize - 1) / kBlockSize);
  uint64_t seg0 = 1 + 2ull * cp_blocks;
  uint64_t nsegs = (total_blocks - seg0) / seg_blocks;
  if (nsegs < kMinSegments) {
    *why = "volume too small for its checkpoint regions";
    return false;
  }
  *sb = Superblock{};
  sb->volume_id = volume_id;
  sb->segment_blocks = seg_blocks;
  sb->nsegments = uint32_t(std::min<uint64_t>(nsegs, UINT32_MAX - 1));
  sb->cp_block[0] = 1;
  sb->cp_block[1] = 1 + cp_blocks;
  sb->cp_blocks = cp_blocks;
  sb->seg0_block = seg0;
  sb->max_inodes = max_inodes;
  sb->created_sec = time(nullptr);
  sb->uuid = std::random_device{}() | (uint64_t(std::random_device{}()) << 32);
  return true;
}

void encode_superblock(const Superblock& sb, uint8_t* block) {
  std::memset(block, 0, kBlockSize);
  Encoder e(block);
  e.u64(kSuperMagic);
  e.u32(0);  // crc, filled below
  e.u32(sb.version);
  e.u32(sb.volume_id);
  e.u32(sb.segment_blocks);
  e.u32(sb.nsegments);
  e.u32(sb.cp_blocks);
  e.u64(sb.cp_block[0]);
  e.u64(sb.cp_block[1]);
  e.u64(sb.seg0_block);
  e.u64(sb.max_inodes);
  e.u64(uint64_t(sb.created_sec));
  e.u64(sb.uuid);
  put32(block + 8, crc32c(block, kBlockSize));
}

bool decode_superblock(const uint8_t* block, Superblock* sb, std::string* why) {
  Decoder d(block);
  if (d.u64() != kSuperMagic) {
    *why = "not an LFS volume (bad superblock magic)";
    return false;
  }
  uint32_t stored = d.u32();
  uint8_t copy[kBlockSize];
  std::memcpy(copy, block, kBlockSize);
  put32(copy + 8, 0);
  if (crc32c(copy, kBlockSize) != stored) {
    *why = "superblock checksum mismatch";
    return false;
  }
  sb->version = d.u32();
  if (sb->version < kFirstFormatVersion || sb->version > kFormatVersion) {
    *why = "format version " + std::to_string(sb->version) + " is not one this nasd reads (" +
           std::to_string(kFirstFormatVersion) + " to " + std::to_string(kFormatVersion) + ")";
    return false;
  }
  sb->volume_id = d.u32();
  sb->segment_blocks = d.u32();
  sb->nsegments = d.u32();
  sb->cp_blocks = d.u32();
  sb->cp_block[0] = d.u64();
  sb->cp_block[1] = d.u64();
  sb->seg0_block = d.u64();
  sb->max_inodes = d.u64();
  sb->created_sec = int64_t(d.u64());
  sb->uuid = d.u64();
  if (sb->segment_blocks < 16 || sb->nsegments == 0 || sb->cp_blocks == 0 ||
      sb->seg0_block < 1 + 2ull * sb->cp_blocks) {
    *why = "superblock geometry is inconsistent";
    return false;
  }
  return true;
}

}  // namespace nasd::fs::lfs
