// Inode map: allocation order, generations, claims, block persistence. Also the inode codec.
#include <gtest/gtest.h>

#include "fs/lfs/inode.h"
#include "fs/lfs/inode_map.h"

namespace nasd::fs::lfs {
namespace {

TEST(InodeMap, AllocatesLowestFreeAndBumpsGenerationOnReuse) {
  InodeMap m(1000);
  ASSERT_TRUE(m.claim(kRootIno, 1));
  uint32_t g1, g2, g3, g4;
  uint64_t a = m.allocate(&g1), b = m.allocate(&g2);
  EXPECT_EQ(a, 2u);
  EXPECT_EQ(b, 3u);
  EXPECT_EQ(g1, 1u);
  m.release(a);
  EXPECT_EQ(m.live_count(), 2u);
  uint64_t c = m.allocate(&g3);
  EXPECT_EQ(c, a);
  EXPECT_EQ(g3, g1 + 1);
  EXPECT_EQ(m.allocate(&g4), 4u);
  EXPECT_FALSE(m.claim(b, 9));  // in use
  EXPECT_TRUE(m.claim(50, 9));
  EXPECT_EQ(m.find(50)->gen, 9u);
  uint32_t g5;
  EXPECT_EQ(m.allocate(&g5), 5u);  // numbers skipped by the claim are free
}

TEST(InodeMap, FullMapReturnsZero) {
  InodeMap m(4);
  ASSERT_TRUE(m.claim(kRootIno, 1));
  uint32_t g;
  EXPECT_EQ(m.allocate(&g), 2u);
  EXPECT_EQ(m.allocate(&g), 3u);
  EXPECT_EQ(m.allocate(&g), 0u);
  EXPECT_FALSE(m.claim(4, 1));
}

TEST(InodeMap, BlocksRoundTrip) {
  InodeMap m(100000);
  ASSERT_TRUE(m.claim(kRootIno, 1));
  uint32_t g;
  for (int i = 0; i < 600; i++) m.allocate(&g);
  for (uint64_t ino = 2; ino < 602; ino++)
    m.set(ino, ImapEntry{1000 + ino, uint16_t(ino % 16), ino % 3 != 0, uint32_t(ino * 5)});
  EXPECT_EQ(m.block_count(), 3u);
  EXPECT_EQ(m.dirty_blocks().size(), 3u);
  InodeMap back(100000);
  uint8_t blk[kBlockSize];
  for (uint32_t b = 0; b < m.block_count(); b++) {
    m.encode_block(b, blk);
    back.load_block(b, blk);
  }
  back.finish_load(m.next_ino());
  EXPECT_EQ(back.live_count(), m.live_count());
  for (uint64_t ino = 1; ino < 602; ino++) {
    const ImapEntry *x = m.find(ino), *y = back.find(ino);
    ASSERT_TRUE(y);
    EXPECT_EQ(x->addr, y->addr);
    EXPECT_EQ(x->slot, y->slot);
    EXPECT_EQ(x->live, y->live);
    EXPECT_EQ(x->gen, y->gen);
  }
  uint32_t gen;
  uint64_t reused = back.allocate(&gen);
  EXPECT_EQ(reused % 3, 0u);  // the first dead number comes back
  EXPECT_EQ(gen, uint32_t(reused * 5) + 1);
}

TEST(InodeCodec, RoundTripsEveryField) {
  Inode in;
  in.ino = 123456789;
  in.gen = 77;
  in.type = FileType::Chr;
  in.mode = 04755;
  in.nlink = 3;
  in.uid = 1000;
  in.gid = 2000;
  in.size = 1ull << 45;
  in.blocks = 99;
  in.rdev_major = 8;
  in.rdev_minor = 17;
  in.atime = {1, 2};
  in.mtime = {-3, 999999999};
  in.ctime = {1700000000, 5};
  in.has_verifier = true;
  in.verifier = 0xfeedfacecafebeefull;
  in.parent = 42;
  in.dir_entries = 1000000;
  for (int i = 0; i < kDirectPointers; i++) in.direct[i] = 100 + i;
  for (int i = 0; i < kTreeCount; i++) in.tree[i] = 1000 + i;
  uint8_t slot[kInodeBytes];
  encode_inode(in, slot);
  Inode out;
  ASSERT_TRUE(decode_inode(slot, &out));
  EXPECT_EQ(out.ino, in.ino);
  EXPECT_EQ(out.gen, in.gen);
  EXPECT_EQ(out.type, in.type);
  EXPECT_EQ(out.mode, in.mode);
  EXPECT_EQ(out.size, in.size);
  EXPECT_EQ(out.rdev_minor, in.rdev_minor);
  EXPECT_EQ(out.mtime, in.mtime);
  EXPECT_EQ(out.ctime, in.ctime);
  EXPECT_TRUE(out.has_verifier);
  EXPECT_EQ(out.verifier, in.verifier);
  EXPECT_EQ(out.dir_entries, in.dir_entries);
  EXPECT_EQ(out.direct[11], 111u);
  EXPECT_EQ(out.tree[3], 1003u);
  uint8_t empty[kInodeBytes] = {};
  EXPECT_FALSE(decode_inode(empty, &out));
}

}  // namespace
}  // namespace nasd::fs::lfs
