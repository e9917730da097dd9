#include "fs/lfs/log_reader.h"

#include <cstring>

#include "fs/lfs/checksum.h"

namespace nasd::fs::lfs {

namespace {

bool check_blocks(const LogUnit& u) {
  size_t bi = 0;
  for (const SummaryRecord& r : u.summary.records) {
    if (!r.has_block()) continue;
    if (crc32c(u.block(bi), kBlockSize) != r.block_crc) return false;
    bi++;
  }
  return true;
}

bool fits(const Superblock& sb, uint32_t off, const Summary& s) {
  return uint64_t(off) + 1 + s.nblocks() <= sb.segment_blocks;
}

}  // namespace

bool read_unit(BlockDevice& dev, const Superblock& sb, uint32_t seg, uint32_t off, LogUnit* out) {
  if (seg >= sb.nsegments || off + 1 > sb.segment_blocks) return false;
  alignas(kBlockSize) static thread_local uint8_t sum[kBlockSize];
  if (!dev.read(sb.segment_start(seg) + off, 1, sum)) return false;
  out->seg = seg;
  out->off = off;
  if (!decode_summary(sum, &out->summary) || !fits(sb, off, out->summary)) return false;
  uint32_t n = out->summary.nblocks();
  out->blocks.resize(size_t(n) * kBlockSize);
  if (n > 0 && !dev.read(sb.segment_start(seg) + off + 1, n, out->blocks.data())) return false;
  return check_blocks(*out);
}

bool parse_unit(const uint8_t* segment, const Superblock& sb, uint32_t seg, uint32_t off,
                LogUnit* out) {
  if (off + 1 > sb.segment_blocks) return false;
  out->seg = seg;
  out->off = off;
  if (!decode_summary(segment + size_t(off) * kBlockSize, &out->summary) ||
      !fits(sb, off, out->summary))
    return false;
  uint32_t n = out->summary.nblocks();
  const uint8_t* first = segment + size_t(off + 1) * kBlockSize;
  out->blocks.assign(first, first + size_t(n) * kBlockSize);
  return check_blocks(*out);
}

}  // namespace nasd::fs::lfs
