// Segment summary encoding: round trip, checksum rejection, capacity.
#include <cstring>

#include <gtest/gtest.h>

#include "fs/lfs/checksum.h"
#include "fs/lfs/summary.h"

namespace nasd::fs::lfs {
namespace {

Summary sample() {
  Summary s;
  s.lsn = 987654321;
  s.prev_crc = 0xdeadbeef;
  s.journal_seq = 4242;
  s.next_seg = 17;
  s.flags = kUnitGroupEnd;
  s.time = 1700000000;
  s.records.push_back({RecordKind::Data, 12, 3, (1ull << 40) + 5, 0x1111});
  s.records.push_back({RecordKind::InodeFree, 99, 8, 0, 0});
  s.records.push_back({RecordKind::Node, 12, 3, 0x8040000000000001ull, 0x2222});
  s.records.push_back({RecordKind::InodeBlock, 0, 0, 16, 0x3333});
  return s;
}

TEST(Checksum, Crc32cKnownValueAndBothImplementationsAgree) {
  const char* check = "123456789";
  EXPECT_EQ(crc32c(check, 9), 0xE3069283u);
  EXPECT_EQ(crc32c_portable(check, 9), 0xE3069283u);
  std::vector<uint8_t> buf(10007);
  for (size_t i = 0; i < buf.size(); i++) buf[i] = uint8_t(i * 131 + 7);
  for (size_t n : {0ul, 1ul, 7ul, 8ul, 9ul, 4096ul, 10007ul})
    EXPECT_EQ(crc32c(buf.data(), n), crc32c_portable(buf.data(), n)) << n;
  // Chaining through the seed equals one pass.
  EXPECT_EQ(crc32c(buf.data() + 100, 900, crc32c(buf.data(), 100)), crc32c(buf.data(), 1000));
}

TEST(Summary, RoundTrip) {
  Summary s = sample();
  uint8_t block[kBlockSize];
  encode_summary(&s, block);
  Summary d;
  ASSERT_TRUE(decode_summary(block, &d));
  EXPECT_EQ(d.crc, s.crc);
  EXPECT_EQ(d.lsn, s.lsn);
  EXPECT_EQ(d.prev_crc, s.prev_crc);
  EXPECT_EQ(d.journal_seq, s.journal_seq);
  EXPECT_EQ(d.next_seg, s.next_seg);
  EXPECT_EQ(d.flags, s.flags);
  EXPECT_EQ(d.time, s.time);
  ASSERT_EQ(d.records.size(), 4u);
  EXPECT_EQ(d.nblocks(), 3u);  // the InodeFree record owns no block
  for (size_t i = 0; i < 4; i++) {
    EXPECT_EQ(d.records[i].kind, s.records[i].kind);
    EXPECT_EQ(d.records[i].ino, s.records[i].ino);
    EXPECT_EQ(d.records[i].gen, s.records[i].gen);
    EXPECT_EQ(d.records[i].offset, s.records[i].offset);
    EXPECT_EQ(d.records[i].block_crc, s.records[i].block_crc);
  }
}

TEST(Summary, AnyFlippedByteIsRejected) {
  Summary s = sample();
  uint8_t block[kBlockSize];
  encode_summary(&s, block);
  for (size_t pos : {0ul, 5ul, 9ul, 40ul, 70ul, 200ul, 4095ul}) {
    uint8_t copy[kBlockSize];
    std::memcpy(copy, block, kBlockSize);
    copy[pos] ^= 0x40;
    Summary d;
    EXPECT_FALSE(decode_summary(copy, &d)) << "byte " << pos;
  }
  uint8_t zeros[kBlockSize] = {};
  Summary d;
  EXPECT_FALSE(decode_summary(zeros, &d));
}

TEST(Summary, HoldsMaxRecords) {
  Summary s;
  for (size_t i = 0; i < kMaxRecords; i++)
    s.records.push_back({RecordKind::Data, i, uint32_t(i), i * 3, uint32_t(i * 7)});
  uint8_t block[kBlockSize];
  encode_summary(&s, block);
  Summary d;
  ASSERT_TRUE(decode_summary(block, &d));
  ASSERT_EQ(d.records.size(), kMaxRecords);
  EXPECT_EQ(d.records.back().offset, (kMaxRecords - 1) * 3);
}

}  // namespace
}  // namespace nasd::fs::lfs
