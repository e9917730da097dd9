// Block map geometry and sparse files through the volume: holes read as zeros, `used` counts
// only allocated blocks, 64-bit offsets, truncation frees blocks, FBig past the map.
#include <gtest/gtest.h>

#include "fs/lfs/block_map.h"
#include "tests/fs/test_volume.h"

namespace nasd::fs::lfs::testing {
namespace {

TEST(BlockMap, LocateBoundaries) {
  BlockPath p;
  ASSERT_TRUE(locate(0, &p));
  EXPECT_TRUE(p.direct);
  ASSERT_TRUE(locate(11, &p));
  EXPECT_TRUE(p.direct);
  EXPECT_EQ(p.slot, 11u);
  ASSERT_TRUE(locate(12, &p));
  EXPECT_FALSE(p.direct);
  EXPECT_EQ(p.tree, 0u);
  EXPECT_EQ(p.rel, 0u);
  ASSERT_TRUE(locate(12 + 512, &p));
  EXPECT_EQ(p.tree, 1u);
  EXPECT_EQ(p.rel, 0u);
  ASSERT_TRUE(locate(12 + 512 + 512 * 512 - 1, &p));
  EXPECT_EQ(p.tree, 1u);
  EXPECT_EQ(p.rel, 512u * 512 - 1);
  ASSERT_TRUE(locate(max_file_blocks() - 1, &p));
  EXPECT_EQ(p.tree, 3u);
  EXPECT_FALSE(locate(max_file_blocks(), &p));
  EXPECT_GT(max_file_blocks() * kBlockSize, 1ull << 47);
}

TEST(BlockMap, NodeKeysSortChildrenBeforeParents) {
  NodeId leaf{3, 1, 123456}, mid = parent_of(leaf), top = parent_of(parent_of(mid));
  EXPECT_LT(node_key(leaf), node_key(mid));
  EXPECT_LT(node_key(mid), node_key(top));
  EXPECT_TRUE(is_root(top));
  EXPECT_EQ(node_from_key(node_key(leaf)).index, 123456u);
  EXPECT_EQ(node_from_key(node_key(mid)).level, 2u);
  EXPECT_TRUE(valid_node(leaf));
  EXPECT_FALSE(valid_node(NodeId{0, 2, 0}));  // tree 0 has height 1
  EXPECT_EQ(slot_for(1, 513), 1u);
  EXPECT_EQ(slot_for(2, 513), 1u);
}

class SparseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    opts_ = small_options(dir_.path());
    vol_ = make_volume(opts_);
    ASSERT_TRUE(vol_);
    f_ = create_file(*vol_, vol_->root(), "sparse");
  }
  ScratchDir dir_;
  LfsOptions opts_;
  std::unique_ptr<LfsVolume> vol_;
  InodeId f_;
};

TEST_F(SparseTest, HolesReadZerosAndUsedCountsAllocatedOnly) {
  uint64_t far = 5ull << 40;  // 5 TiB: deep in the 4-level tree
  auto d = pattern(4096, 1);
  ASSERT_EQ(write_at(*vol_, f_, far, d), Status::Ok);
  ASSERT_EQ(write_at(*vol_, f_, 100, pattern(10, 2)), Status::Ok);
  Attr a = getattr(*vol_, f_);
  EXPECT_EQ(a.size, far + 4096);
  // Two data blocks, plus the four nodes on the path to the far block.
  EXPECT_EQ(a.used, (2u + 4u) * 4096);
  EXPECT_EQ(read_at(*vol_, f_, far, 4096), d);
  EXPECT_EQ(read_at(*vol_, f_, far - 8192, 8192), std::vector<uint8_t>(8192, 0));
  EXPECT_EQ(read_at(*vol_, f_, 1ull << 30, 1000), std::vector<uint8_t>(1000, 0));
  auto head = read_at(*vol_, f_, 0, 200);
  EXPECT_EQ(std::vector<uint8_t>(head.begin() + 100, head.begin() + 110), pattern(10, 2));
  EXPECT_EQ(head[99], 0);
  // Durable and correct after a crash and reopen, too.
  vol_.reset();
  vol_ = reopen(opts_);
  EXPECT_EQ(read_at(*vol_, f_, far, 4096), d);
  EXPECT_EQ(getattr(*vol_, f_).used, 6u * 4096);
}

TEST_F(SparseTest, TruncateFreesBlocksAndNodes) {
  for (uint64_t blk : {0ull, 11ull, 12ull, 600ull, 300000ull})
    ASSERT_EQ(write_at(*vol_, f_, blk * 4096, pattern(4096, uint32_t(blk))), Status::Ok);
  uint64_t used = getattr(*vol_, f_).used;
  EXPECT_GT(used, 5u * 4096);
  SetAttr sa;
  sa.size = 12 * 4096 + 10;  // keeps blocks 0, 11 and 12 (partially)
  Wcc w;
  ASSERT_EQ(vol_->setattr(root_ctx(), f_, sa, std::nullopt, &w), Status::Ok);
  // Blocks 0, 11, 12 and the single-indirect node survive.
  EXPECT_EQ(getattr(*vol_, f_).used, 4u * 4096);
  auto tail = read_at(*vol_, f_, 12 * 4096, 10);
  auto want = pattern(4096, 12);
  EXPECT_EQ(tail, std::vector<uint8_t>(want.begin(), want.begin() + 10));
  sa.size = 0;
  ASSERT_EQ(vol_->setattr(root_ctx(), f_, sa, std::nullopt, &w), Status::Ok);
  EXPECT_EQ(getattr(*vol_, f_).used, 0u);
  sa.size = 1 << 20;
  ASSERT_EQ(vol_->setattr(root_ctx(), f_, sa, std::nullopt, &w), Status::Ok);
  EXPECT_EQ(read_at(*vol_, f_, 0, 4096), std::vector<uint8_t>(4096, 0));
}

TEST_F(SparseTest, BeyondTheMapIsFBig) {
  uint64_t max = vol_->limits().max_file_size;
  EXPECT_EQ(write_at(*vol_, f_, max, pattern(2, 1)), Status::FBig);
  EXPECT_EQ(write_at(*vol_, f_, UINT64_MAX - 1, pattern(10, 1)), Status::FBig);
  EXPECT_EQ(write_at(*vol_, f_, max - 1, pattern(1, 1)), Status::Ok);
  SetAttr sa;
  sa.size = max + 10;
  Wcc w;
  EXPECT_EQ(vol_->setattr(root_ctx(), f_, sa, std::nullopt, &w), Status::FBig);
}

}  // namespace
}  // namespace nasd::fs::lfs::testing
