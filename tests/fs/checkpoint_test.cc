// Checkpoint encoding and the geometry plan (region sizes fit the largest checkpoint).
#include <gtest/gtest.h>

#include "fs/lfs/checkpoint.h"
#include "fs/lfs/inode_map.h"

namespace nasd::fs::lfs {
namespace {

TEST(Checkpoint, RoundTripAndChecksum) {
  Superblock sb;
  std::string why;
  ASSERT_TRUE(plan_layout(256ull << 20, 1ull << 20, 3, &sb, &why)) << why;
  Checkpoint cp;
  cp.seq = 12;
  cp.head = LogPosition{3, 77, 4, 5000, 0xabcdef01};
  cp.durable_jseq = 99;
  cp.next_ino = 1234;
  cp.time = 1700000000;
  cp.imap_addrs = {0, 500, 501};
  cp.sut.resize(sb.nsegments);
  cp.sut[3] = SegmentUsage{123456, 77};
  auto img = encode_checkpoint(cp);
  Checkpoint d;
  ASSERT_TRUE(decode_checkpoint(img.data(), img.size(), sb, &d));
  EXPECT_EQ(d.seq, 12u);
  EXPECT_EQ(d.head.off, 77u);
  EXPECT_EQ(d.head.next_seg, 4u);
  EXPECT_EQ(d.head.lsn, 5000u);
  EXPECT_EQ(d.head.prev_crc, 0xabcdef01u);
  EXPECT_EQ(d.durable_jseq, 99u);
  EXPECT_EQ(d.next_ino, 1234u);
  EXPECT_EQ(d.imap_addrs, cp.imap_addrs);
  EXPECT_EQ(d.sut[3].live_bytes, 123456u);
  img[150] ^= 1;
  EXPECT_FALSE(decode_checkpoint(img.data(), img.size(), sb, &d));
}

TEST(Checkpoint, RejectsForeignGeometry) {
  Superblock a, b;
  std::string why;
  ASSERT_TRUE(plan_layout(256ull << 20, 1ull << 20, 3, &a, &why));
  ASSERT_TRUE(plan_layout(512ull << 20, 1ull << 20, 3, &b, &why));
  Checkpoint cp;
  cp.head.next_seg = 1;
  cp.sut.resize(a.nsegments);
  auto img = encode_checkpoint(cp);
  Checkpoint d;
  EXPECT_TRUE(decode_checkpoint(img.data(), img.size(), a, &d));
  EXPECT_FALSE(decode_checkpoint(img.data(), img.size(), b, &d));
}

TEST(Layout, RegionHoldsAFullImapAndTable) {
  for (uint64_t size : {64ull << 20, 8ull << 30, 1ull << 40}) {
    Superblock sb;
    std::string why;
    ASSERT_TRUE(plan_layout(size, 4ull << 20, 0, &sb, &why)) << why;
    Checkpoint cp;
    cp.imap_addrs.resize((sb.max_inodes + kImapEntriesPerBlock - 1) / kImapEntriesPerBlock);
    cp.sut.resize(sb.nsegments);
    EXPECT_LE(encode_checkpoint(cp).size(), size_t(sb.cp_blocks) * kBlockSize) << size;
    EXPECT_LE(sb.segment_start(sb.nsegments) * kBlockSize, size);
    uint8_t blk[kBlockSize];
    encode_superblock(sb, blk);
    Superblock back;
    ASSERT_TRUE(decode_superblock(blk, &back, &why));
    EXPECT_EQ(back.nsegments, sb.nsegments);
    EXPECT_EQ(back.seg0_block, sb.seg0_block);
  }
  Superblock sb;
  std::string why;
  EXPECT_FALSE(plan_layout(8ull << 20, 4ull << 20, 0, &sb, &why));
  EXPECT_FALSE(plan_layout(1ull << 30, 5000, 0, &sb, &why));
}

}  // namespace
}  // namespace nasd::fs::lfs
