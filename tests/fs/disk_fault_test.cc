// Host faults under a volume: a full host disk (ENOSPC) and a failing one (EIO), injected at
// the block device. A full host must answer NOSPC only to calls that need space, keep serving
// reads and deletes, and recover by itself when space returns; an I/O error must leave the
// volume read-only with every read still answered.
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "fs/lfs/block_device.h"
#include "tests/fs/test_volume.h"
#include "tests/support/journal_pass_for_testing.h"
#include "util/log.h"

namespace nasd::fs::lfs {
namespace {

using testing::ScratchDir;

class DiskFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    opts_ = testing::small_options(dir_.path());
    opts_.cache_bytes = 1ull << 20;  // small: reads of held blocks must go past the cache
    opts_.write_fault = [this] { return fault_.load(); };
    vol_ = testing::make_volume(opts_);
    ASSERT_TRUE(vol_);
    root_ = vol_->root();
  }

  // Mutations as the NVRAM journal runs them: each is already logged when it reaches the fs.
  Status write(InodeId f, uint64_t off, const std::vector<uint8_t>& d) {
    return apply_journalled_for_testing(*vol_, ++seq_, call::WriteArgs{f, off, d}).status;
  }
  Status create(const std::string& name, InodeId* out) {
    SetAttr sa;
    sa.mode = 0644;
    call::VolumeReply r = apply_journalled_for_testing(
        *vol_, ++seq_, call::CreateArgs{root_, name, CreateMode::Guarded, sa, 0});
    if (auto* c = std::get_if<call::CreatedResult>(&r.result)) *out = c->id;
    return r.status;
  }
  Status remove(const std::string& name) {
    return apply_journalled_for_testing(*vol_, ++seq_, call::RemoveArgs{root_, name}).status;
  }
  std::vector<uint8_t> read(InodeId f, uint64_t off, uint32_t n) {
    return testing::read_at(*vol_, f, off, n);
  }

  ScratchDir dir_;
  LfsOptions opts_;
  std::atomic<int> fault_{0};
  util::LogCapture log_{"fs"};  // host faults are told to the operator in the fs room
  std::unique_ptr<LfsVolume> vol_;
  InodeId root_;
  uint64_t seq_ = 0;
};

TEST_F(DiskFaultTest, FullHostAnswersNoSpcServesReadsAndDeletesAndRecovers) {
  InodeId a, c;
  ASSERT_EQ(create("a", &a), Status::Ok);
  ASSERT_EQ(create("c", &c), Status::Ok);
  ASSERT_EQ(write(a, 0, testing::pattern(256 << 10, 1)), Status::Ok);
  ASSERT_EQ(write(c, 0, testing::pattern(2 << 20, 2)), Status::Ok);
  uint64_t durable = 0;
  ASSERT_EQ(vol_->flush(&durable), Status::Ok);
  ASSERT_EQ(durable, seq_);

  fault_ = ENOSPC;
  // An overwrite needs no space: done (in memory and in the journal), written later.
  const auto fresh = testing::pattern(256 << 10, 3);
  ASSERT_EQ(write(a, 0, fresh), Status::Ok);
  const uint64_t overwrite_seq = seq_;
  EXPECT_EQ(vol_->flush(&durable), Status::NoSpc);
  EXPECT_LT(durable, overwrite_seq) << "a group the host refused must not count as durable";
  EXPECT_TRUE(log_.has("full"));
  EXPECT_NE(vol_->status_text().find("HOST FULL"), std::string::npos);

  // Calls that need space are refused; nothing else is.
  InodeId b;
  EXPECT_EQ(create("b", &b), Status::NoSpc);
  EXPECT_EQ(write(a, 1 << 20, testing::pattern(4096, 4)), Status::NoSpc);
  // Reads go on, including blocks that only the held group has (c's 2 MiB push a's blocks
  // out of the 1 MiB cache).
  EXPECT_EQ(read(c, 0, 2 << 20), testing::pattern(2 << 20, 2));
  EXPECT_EQ(read(a, 0, 256 << 10), fresh);
  EXPECT_EQ(remove("c"), Status::Ok);

  // Space returns: the next flush writes everything, and new files can be made again.
  fault_ = 0;
  ASSERT_EQ(vol_->flush(&durable), Status::Ok);
  EXPECT_EQ(durable, seq_);
  EXPECT_EQ(vol_->status_text().find("HOST FULL"), std::string::npos);
  ASSERT_EQ(create("b", &b), Status::Ok);
  ASSERT_EQ(write(b, 0, testing::pattern(8192, 5)), Status::Ok);
  ASSERT_EQ(vol_->flush(&durable), Status::Ok);

  // What was held reached the disk: a crash (no close) and a reopen find all of it.
  vol_.reset();
  opts_.write_fault = nullptr;
  vol_ = testing::reopen(opts_);
  ASSERT_TRUE(vol_);
  InodeId got;
  std::optional<Attr> oa, da;
  ASSERT_EQ(vol_->lookup(testing::root_ctx(), root_, "a", &got, &oa, &da), Status::Ok);
  EXPECT_EQ(read(got, 0, 256 << 10), fresh);
  EXPECT_EQ(vol_->lookup(testing::root_ctx(), root_, "c", &got, &oa, &da), Status::NoEnt);
  ASSERT_EQ(vol_->lookup(testing::root_ctx(), root_, "b", &got, &oa, &da), Status::Ok);
  EXPECT_EQ(read(got, 0, 8192), testing::pattern(8192, 5));
}

TEST_F(DiskFaultTest, IoErrorMakesTheVolumeReadOnlyAndReadsGoOn) {
  InodeId a, c;
  ASSERT_EQ(create("a", &a), Status::Ok);
  ASSERT_EQ(create("c", &c), Status::Ok);
  ASSERT_EQ(write(c, 0, testing::pattern(2 << 20, 2)), Status::Ok);
  uint64_t durable = 0;
  ASSERT_EQ(vol_->flush(&durable), Status::Ok);

  fault_ = EIO;
  const auto fresh = testing::pattern(128 << 10, 7);
  ASSERT_EQ(write(a, 0, fresh), Status::Ok);
  EXPECT_EQ(vol_->flush(&durable), Status::Io);
  EXPECT_TRUE(log_.has("read-only"));
  EXPECT_NE(vol_->status_text().find("FAILED"), std::string::npos);

  // Read-only: every change is refused as such, every read is answered.
  InodeId b;
  EXPECT_EQ(create("b", &b), Status::RoFs);
  EXPECT_EQ(write(a, 0, testing::pattern(4096, 8)), Status::RoFs);
  EXPECT_EQ(remove("c"), Status::RoFs);
  EXPECT_EQ(read(c, 0, 2 << 20), testing::pattern(2 << 20, 2));
  EXPECT_EQ(read(a, 0, 128 << 10), fresh);
  Attr attr;
  EXPECT_EQ(vol_->getattr(testing::root_ctx(), a, &attr), Status::Ok);
  EXPECT_EQ(attr.size, 128u << 10);
  ReaddirResult list;
  EXPECT_EQ(vol_->readdir(testing::root_ctx(), root_, 0, 0, 100, false, &list), Status::Ok);
  EXPECT_EQ(list.entries.size(), 4u);  // . .. a c
}

TEST(DiskAllocation, ThickVolumesAreAllocatedUpFrontAndThinOnesAreNot) {
  ScratchDir dir;
  auto thick = testing::small_options(dir.path(), 32ull << 20);
  ASSERT_TRUE(testing::make_volume(thick));
  struct stat st{};
  ASSERT_EQ(stat(thick.backing.c_str(), &st), 0);
  EXPECT_GE(uint64_t(st.st_blocks) * 512, 32ull << 20);

  auto thin = thick;
  thin.backing = dir.path() + "/thin.lfs";
  thin.preallocate = false;
  ASSERT_TRUE(testing::make_volume(thin));
  ASSERT_EQ(stat(thin.backing.c_str(), &st), 0);
  EXPECT_LT(uint64_t(st.st_blocks) * 512, 16ull << 20);
}

// Aligned writes go to the device with O_DIRECT and unaligned ones through the page cache;
// reads always use the page cache. Whatever path each write took, a read sees the newest bytes
// of every block (the kernel flushes and invalidates the page cache over a direct write).
TEST(DiskAllocation, DirectAndBufferedWritesReadBackTheNewestBytes) {
  ScratchDir dir;
  std::string err;
  auto dev = BlockDevice::open(dir.path() + "/dev", 64 * kBlockSize, &err);
  ASSERT_TRUE(dev) << err;
  if (!dev->direct_writes()) GTEST_SKIP() << "the host refuses O_DIRECT under " << dir.path();
  AlignedBlock a = make_aligned_block(), b = make_aligned_block();
  std::vector<uint8_t> got(2 * kBlockSize);
  auto fill = [](uint8_t* p, uint8_t v) { std::memset(p, v, kBlockSize); };
  // Buffered (an unaligned buffer), then read into the page cache, then overwritten directly:
  // the cached copy must not be what a read returns.
  std::vector<uint8_t> unaligned(kBlockSize + 1);
  std::memset(unaligned.data() + 1, 0x11, kBlockSize);
  ASSERT_TRUE(dev->write(3, unaligned.data() + 1, 1));
  ASSERT_TRUE(dev->read(3, 1, got.data()));
  ASSERT_EQ(got[0], 0x11);
  fill(a.get(), 0x22);
  ASSERT_TRUE(dev->write(3, a.get(), 1));
  ASSERT_TRUE(dev->read(3, 1, got.data()));
  EXPECT_EQ(got[0], 0x22);
  EXPECT_EQ(got[kBlockSize - 1], 0x22);
  // A direct log batch of two adjacent blocks, then a buffered overwrite of the second.
  fill(a.get(), 0x33);
  fill(b.get(), 0x44);
  BlockDevice::Write w;
  w.block = 10;
  w.iov = {{a.get(), kBlockSize}, {b.get(), kBlockSize}};
  ASSERT_TRUE(dev->write_log({w}));
  ASSERT_TRUE(dev->read(10, 2, got.data()));
  EXPECT_EQ(got[0], 0x33);
  EXPECT_EQ(got[kBlockSize], 0x44);
  std::memset(unaligned.data() + 1, 0x55, kBlockSize);
  ASSERT_TRUE(dev->write(11, unaligned.data() + 1, 1));
  ASSERT_TRUE(dev->sync());
  ASSERT_TRUE(dev->read(10, 2, got.data()));
  EXPECT_EQ(got[0], 0x33);
  EXPECT_EQ(got[kBlockSize], 0x55);
  // And what a fresh opener (recovery after kill -9) reads from the file.
  dev.reset();
  dev = BlockDevice::open(dir.path() + "/dev", 0, &err);
  ASSERT_TRUE(dev) << err;
  ASSERT_TRUE(dev->read(3, 1, got.data()));
  EXPECT_EQ(got[0], 0x22);
  ASSERT_TRUE(dev->read(10, 2, got.data()));
  EXPECT_EQ(got[0], 0x33);
  EXPECT_EQ(got[kBlockSize], 0x55);
}

}  // namespace
}  // namespace nasd::fs::lfs
