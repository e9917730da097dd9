#include "fs/lfs/checkpoint.h"

#include "fs/lfs/checksum.h"
#include "fs/lfs/endian.h"

namespace nasd::fs::lfs {

namespace {
constexpr uint32_t kCheckpointMagic = 0x5043464c;  // "LFCP"
constexpr size_t kHeaderBytes = 128;
constexpr size_t kCrcOffset = 4;
constexpr size_t kLenOffset = 8;
}  // namespace

std::vector<uint8_t> encode_checkpoint(const Checkpoint& cp) {
  size_t payload = kHeaderBytes + cp.imap_addrs.size() * 8 + cp.sut.size() * 16;
  size_t blocks = (payload + kBlockSize - 1) / kBlockSize;
  std::vector<uint8_t> out(blocks * kBlockSize, 0);
  Encoder e(out.data());
  e.u32(kCheckpointMagic);
  e.u32(0);  // crc
  e.u64(payload);
  e.u64(cp.seq);
  e.u32(cp.head.seg);
  e.u32(cp.head.off);
  e.u32(cp.head.next_seg);
  e.u32(cp.head.prev_crc);
  e.u64(cp.head.lsn);
  e.u64(cp.durable_jseq);
  e.u64(cp.next_ino);
  e.u64(uint64_t(cp.time));
  e.u32(uint32_t(cp.imap_addrs.size()));
  e.u32(uint32_t(cp.sut.size()));
  e.u64(cp.catalog_addr);
  Encoder body(out.data() + kHeaderBytes);
  for (uint64_t a : cp.imap_addrs) body.u64(a);
  for (const SegmentUsage& u : cp.sut) {
    body.u32(u.live_bytes);
    body.u32(u.pinned ? 1 : 0);
    body.u64(uint64_t(u.mtime));
  }
  put32(out.data() + kCrcOffset, crc32c(out.data(), payload));
  return out;
}

bool decode_checkpoint(const uint8_t* data, size_t len, const Superblock& sb, Checkpoint* cp) {
  if (len < kHeaderBytes || get32(data) != kCheckpointMagic) return false;
  uint64_t payload = get64(data + kLenOffset);
  if (payload < kHeaderBytes || payload > len) return false;
  uint32_t stored = get32(data + kCrcOffset);
  std::vector<uint8_t> copy(data, data + payload);
  put32(copy.data() + kCrcOffset, 0);
  if (crc32c(copy.data(), payload) != stored) return false;
  Decoder d(data + 16);
  cp->seq = d.u64();
  cp->head.seg = d.u32();
  cp->head.off = d.u32();
  cp->head.next_seg = d.u32();
  cp->head.prev_crc = d.u32();
  cp->head.lsn = d.u64();
  cp->durable_jseq = d.u64();
  cp->next_ino = d.u64();
  cp->time = int64_t(d.u64());
  uint32_t nimap = d.u32();
  uint32_t nsut = d.u32();
  cp->catalog_addr = d.u64();  // zero in every format-1 checkpoint: no snapshots
  if (nsut != sb.nsegments || kHeaderBytes + uint64_t(nimap) * 8 + uint64_t(nsut) * 16 != payload)
    return false;
  if (cp->head.seg >= sb.nsegments || cp->head.next_seg >= sb.nsegments ||
      cp->head.off > sb.segment_blocks)
    return false;
  Decoder body(data + kHeaderBytes);
  cp->imap_addrs.resize(nimap);
  for (auto& a : cp->imap_addrs) a = body.u64();
  cp->sut.resize(nsut);
  for (auto& u : cp->sut) {
    u.live_bytes = body.u32();
    u.pinned = body.u32() & 1;  // zero in format 1
    u.mtime = int64_t(body.u64());
  }
  return true;
}

}  // namespace nasd::fs::lfs
