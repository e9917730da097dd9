// One volume whose file system cannot absorb records (its flush fails: the host disk is full or
// failing) must not hold back the shared journal: the other volumes keep their normal pace, the
// stuck volume's records stay (carried forward past the others), and after a crash every one of
// them is replayed exactly once.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "nvram/journal_volume.h"
#include "tests/nvram/test_util.h"
#include "tests/support/memory_fs.h"

namespace nasd::nvram {
namespace {

using fs::Status;

// A MemoryFs whose flushes fail on demand, like an LFS volume on a full or failing disk.
class StuckFs : public test_support::MemoryFs {
 public:
  using MemoryFs::MemoryFs;
  std::atomic<bool> failing{false};
  Status flush(uint64_t* durable) override {
    if (failing) {
      *durable = durable_seq();
      return Status::Io;
    }
    return MemoryFs::flush(durable);
  }
};

fs::InodeId make_file(JournalVolume& v, const std::string& name) {
  fs::InodeId id;
  std::optional<fs::Attr> a;
  fs::Wcc w;
  EXPECT_EQ(v.create({}, v.root(), name, fs::CreateMode::Guarded, {}, 0, &id, &a, &w), Status::Ok);
  return id;
}

Status write(JournalVolume& v, fs::InodeId f, uint64_t block, uint64_t seed) {
  fs::Stability c;
  fs::Wcc w;
  return v.write({}, f, block * 4096, testing::pattern(seed, 4096), fs::Stability::FileSync, &c, &w);
}

TEST(StuckVolume, DoesNotHoldBackTheOtherVolumesAndKeepsItsRecords) {
  testing::ScratchDir dir;
  auto opts = testing::churning_options(dir.file("nv"));
  auto stuck_fs = std::make_shared<StuckFs>(1, testing::mem_target_options());
  auto good_fs = std::make_shared<test_support::MemoryFs>(2, testing::mem_target_options());
  auto journal = Journal::open(opts);
  auto stuck = std::make_unique<JournalVolume>(journal, stuck_fs);
  auto good = std::make_unique<JournalVolume>(journal, good_fs);
  stuck->recover();
  good->recover();

  // The stuck volume's records sit at the head of the log.
  fs::InodeId s = make_file(*stuck, "s");
  stuck_fs->failing = true;
  for (uint64_t b = 0; b < 4; ++b) ASSERT_EQ(write(*stuck, s, b, 100 + b), Status::Ok);
  // Write-behind notices the failing flush within a pass or two.
  for (int i = 0; i < 200 && journal->status().find("stuck volumes") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));

  // 2 MiB through a 256 KiB log on the healthy volume: every call at its normal pace.
  fs::InodeId g = make_file(*good, "g");
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < 512; ++i) {
    ASSERT_EQ(write(*good, g, i % 64, i), Status::Ok) << "write " << i;
    ASSERT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(15))
        << "the healthy volume is held back (write " << i << ")\n" << journal->status();
  }
  JournalStats st = journal->stats();
  EXPECT_EQ(st.space_timeouts, 0u) << journal->status();
  EXPECT_GT(st.records_trimmed, 100u);
  EXPECT_NE(journal->status().find("stuck volumes"), std::string::npos) << journal->status();

  // Reads of the stuck volume go on; its records survive a crash and replay exactly once.
  std::vector<uint8_t> got;
  bool eof;
  std::optional<fs::Attr> a;
  ASSERT_EQ(stuck->read({}, s, 4096, 4096, &got, &eof, &a), Status::Ok);
  EXPECT_EQ(got, testing::pattern(101, 4096));
  stuck.reset();
  good.reset();
  journal.reset();
  stuck_fs->crash();
  stuck_fs->failing = false;
  const size_t applied_before = stuck_fs->applied_seqs().size();
  journal = Journal::open(opts);
  stuck = std::make_unique<JournalVolume>(journal, stuck_fs);
  ReplayReport rep = stuck->recover();
  EXPECT_EQ(rep.failed, 0u);
  EXPECT_EQ(stuck_fs->applied_seqs().size() - applied_before, rep.applied);
  for (uint64_t b = 0; b < 4; ++b) {
    ASSERT_EQ(stuck->read({}, s, b * 4096, 4096, &got, &eof, &a), Status::Ok);
    EXPECT_EQ(got, testing::pattern(100 + b, 4096)) << "block " << b;
  }
}

}  // namespace
}  // namespace nasd::nvram
