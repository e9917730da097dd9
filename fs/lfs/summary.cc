#include "fs/lfs/summary.h"

#include <cstring>

#include "fs/lfs/checksum.h"
#include "fs/lfs/endian.h"

namespace nasd::fs::lfs {

namespace {
constexpr uint32_t kSummaryMagic = 0x5353464c;  // "LFSS"
}

uint32_t Summary::nblocks() const {
  uint32_t n = 0;
  for (const auto& r : records) n += r.has_block() ? 1 : 0;
  return n;
}

void encode_summary(Summary* s, uint8_t* block) {
  std::memset(block, 0, kBlockSize);
  Encoder e(block);
  e.u32(kSummaryMagic);
  e.u32(0);
  e.u64(s->lsn);
  e.u64(s->journal_seq);
  e.u64(uint64_t(s->time));
  e.u32(s->prev_crc);
  e.u32(s->next_seg);
  e.u16(uint16_t(s->nblocks()));
  e.u16(uint16_t(s->records.size()));
  e.u32(s->flags);
  Encoder r(block + kSummaryHeader);
  for (const SummaryRecord& rec : s->records) {
    r.u64(rec.ino);
    r.u64(rec.offset);
    r.u32(rec.gen);
    r.u16(uint16_t(rec.kind));
    r.u16(0);
    r.u32(rec.block_crc);
    r.u32(0);
  }
  s->crc = crc32c(block, kBlockSize);
  put32(block + 4, s->crc);
}

bool decode_summary(const uint8_t* block, Summary* s) {
  if (get32(block) != kSummaryMagic) return false;
  uint8_t copy[kBlockSize];
  std::memcpy(copy, block, kBlockSize);
  put32(copy + 4, 0);
  uint32_t crc = crc32c(copy, kBlockSize);
  if (crc != get32(block + 4)) return false;
  Decoder d(block + 8);
  s->crc = crc;
  s->lsn = d.u64();
  s->journal_seq = d.u64();
  s->time = int64_t(d.u64());
  s->prev_crc = d.u32();
  s->next_seg = d.u32();
  uint16_t nblocks = d.u16();
  uint16_t nrecords = d.u16();
  s->flags = d.u32();
  if (nrecords > kMaxRecords) return false;
  s->records.resize(nrecords);
  Decoder r(block + kSummaryHeader);
  for (SummaryRecord& rec : s->records) {
    rec.ino = r.u64();
    rec.offset = r.u64();
    rec.gen = r.u32();
    rec.kind = RecordKind(r.u16());
    r.u16();
    rec.block_crc = r.u32();
    r.u32();
    if (rec.kind < RecordKind::Data || rec.kind > RecordKind::Catalog) return false;
  }
  return s->nblocks() == nblocks;
}

}  // namespace nasd::fs::lfs
