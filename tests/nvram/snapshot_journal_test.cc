// A snapshot taken under the NVRAM journal holds every operation the journal acknowledged, even
// ones only the journal has made durable (the fs flushed nothing), and a crash plus replay after
// it changes the live volume, never the snapshot.
#include <gtest/gtest.h>

#include "fs/lfs/lfs_volume.h"
#include "nvram/journal_volume.h"
#include "tests/nvram/test_util.h"

namespace nasd::nvram {
namespace {

using fs::Status;

struct Stack {
  std::shared_ptr<fs::lfs::LfsVolume> lfs;
  std::shared_ptr<Journal> journal;
  std::unique_ptr<JournalVolume> volume;
};

Stack open_stack(const testing::ScratchDir& dir) {
  fs::lfs::LfsOptions o;
  o.backing = dir.file("v.lfs");
  o.size = 64ull << 20;
  o.segment_size = 1ull << 20;
  o.cache_bytes = 32ull << 20;
  o.volume_id = 3;
  o.background_threads = false;  // the fs writes nothing on its own: only the journal has it
  std::string err;
  Stack s;
  s.lfs = fs::lfs::LfsVolume::open_or_create(o, &err);
  EXPECT_TRUE(s.lfs) << err;
  s.journal = Journal::open(testing::small_options(dir.file("nv"), 8 << 20));
  s.volume = std::make_unique<JournalVolume>(s.journal, s.lfs);
  s.volume->recover();
  return s;
}

std::string read_all(fs::Volume& v, fs::InodeId id) {
  fs::OpContext ctx;
  ctx.cred.uid = 0;
  std::vector<uint8_t> d;
  bool eof;
  std::optional<fs::Attr> a;
  EXPECT_EQ(v.read(ctx, id, 0, 1 << 20, &d, &eof, &a), Status::Ok);
  return std::string(d.begin(), d.end());
}

Status lookup_path(fs::Volume& v, const std::vector<std::string>& path, fs::InodeId* out) {
  fs::OpContext ctx;
  ctx.cred.uid = 0;
  fs::InodeId at = v.root();
  for (const auto& name : path) {
    std::optional<fs::Attr> a, da;
    Status st = v.lookup(ctx, at, name, &at, &a, &da);
    if (st != Status::Ok) return st;
  }
  *out = at;
  return Status::Ok;
}

TEST(SnapshotUnderJournal, HoldsEveryAcknowledgedOperationAndReplayLeavesItAlone) {
  testing::ScratchDir dir;
  Stack s = open_stack(dir);
  fs::OpContext ctx;
  ctx.cred.uid = 0;
  auto put = [&](const std::string& name, const std::string& data, fs::Stability how) {
    fs::InodeId f;
    std::optional<fs::Attr> a;
    fs::Wcc w;
    Status st = s.volume->lookup(ctx, s.volume->root(), name, &f, &a, &a);
    if (st == Status::NoEnt) {
      ASSERT_EQ(s.volume->create(ctx, s.volume->root(), name, fs::CreateMode::Unchecked, {}, 0, &f,
                                 &a, &w),
                Status::Ok);
    }
    fs::Stability got;
    ASSERT_EQ(s.volume->write(ctx, f, 0, {reinterpret_cast<const uint8_t*>(data.data()), data.size()},
                              how, &got, &w),
              Status::Ok);
  };
  for (int i = 0; i < 20; i++) put("f" + std::to_string(i), "before " + std::to_string(i), fs::Stability::FileSync);
  put("unstable", "acknowledged unstable", fs::Stability::Unstable);
  EXPECT_GT(s.lfs->store_for_testing().dirty_blocks() + s.lfs->store_for_testing().has_dirty(), 0u)
      << "the fs must still owe the journal something, or this test proves nothing";

  fs::lfs::SnapshotInfo info;
  ASSERT_EQ(s.lfs->snapshot_create("s", &info), Status::Ok);

  // After the snapshot: changes only the journal holds when the crash comes.
  put("f0", "AFTER", fs::Stability::FileSync);
  fs::Wcc w;
  ASSERT_EQ(s.volume->remove(ctx, s.volume->root(), "f1", &w), Status::Ok);

  auto check = [&](fs::Volume& v) {
    fs::InodeId id;
    for (int i = 0; i < 20; i++) {
      ASSERT_EQ(lookup_path(v, {".snapshot", "s", "f" + std::to_string(i)}, &id), Status::Ok) << i;
      EXPECT_EQ(read_all(v, id), "before " + std::to_string(i));
    }
    ASSERT_EQ(lookup_path(v, {".snapshot", "s", "unstable"}, &id), Status::Ok);
    EXPECT_EQ(read_all(v, id), "acknowledged unstable");
    ASSERT_EQ(lookup_path(v, {"f0"}, &id), Status::Ok);
    EXPECT_EQ(read_all(v, id).substr(0, 5), "AFTER");
    EXPECT_EQ(lookup_path(v, {"f1"}, &id), Status::NoEnt);
  };
  check(*s.volume);

  // Crash: nothing closed, the fs's memory lost; the journal replays the two later operations.
  s.volume.reset();
  s.journal.reset();
  s.lfs.reset();
  Stack again = open_stack(dir);
  check(*again.volume);
  // Mutations under .snapshot are refused by the fs and never journalled.
  fs::InodeId sf;
  ASSERT_EQ(lookup_path(*again.volume, {".snapshot", "s", "f0"}, &sf), Status::Ok);
  fs::Stability got;
  std::vector<uint8_t> one{1};
  EXPECT_EQ(again.volume->write(ctx, sf, 0, one, fs::Stability::FileSync, &got, &w), Status::RoFs);
  again.volume.reset();
  again.journal->shutdown();
  ASSERT_EQ(again.lfs->close(), Status::Ok);
}

}  // namespace
}  // namespace nasd::nvram
