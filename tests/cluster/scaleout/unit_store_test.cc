// Drive stores: recovery by scanning, torn tails, checksums, lost and foreign drives.
#include "cluster/scaleout/unit_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "tests/cluster/scratch_dir.h"

namespace nasd::scaleout {
namespace {

using cluster::testing::ScratchDir;

std::vector<uint8_t> bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 31);
  return v;
}

std::unique_ptr<DriveStore> open_drive(const std::string& path, bool create = true,
                                       DriveIdentity id = {7, 1, 0}) {
  std::unique_ptr<DriveStore> d;
  std::string err;
  EXPECT_EQ(DriveStore::open(path, id, create, &d, &err), UnitStatus::Ok) << err;
  return d;
}

TEST(DriveStore, PutGetRemoveSurviveReopen) {
  ScratchDir dir("scaleout");
  const std::string p = dir.path + "/d.units";
  {
    auto d = open_drive(p);
    for (uint16_t i = 0; i < 10; ++i) {
      auto b = bytes(1000 + i, static_cast<uint8_t>(i));
      ASSERT_EQ(d->put(UnitKey{1, 2, 3, i}, b.data(), static_cast<uint32_t>(b.size())),
                UnitStatus::Ok);
    }
    auto b = bytes(50, 99);
    ASSERT_EQ(d->put(UnitKey{1, 2, 3, 4}, b.data(), 50), UnitStatus::Ok);  // replaced
    ASSERT_EQ(d->remove(UnitKey{1, 2, 3, 5}), UnitStatus::Ok);
    ASSERT_EQ(d->sync(), UnitStatus::Ok);
  }
  auto d = open_drive(p, false);
  std::vector<uint8_t> out;
  EXPECT_EQ(d->keys().size(), 9u);
  EXPECT_EQ(d->get(UnitKey{1, 2, 3, 4}, &out), UnitStatus::Ok);
  EXPECT_EQ(out, bytes(50, 99));
  EXPECT_EQ(d->get(UnitKey{1, 2, 3, 9}, &out), UnitStatus::Ok);
  EXPECT_EQ(out, bytes(1009, 9));
  EXPECT_EQ(d->get(UnitKey{1, 2, 3, 5}, &out), UnitStatus::NotFound);
  EXPECT_EQ(d->remove(UnitKey{9, 9, 9, 9}), UnitStatus::NotFound);
  auto big = bytes(kMaxUnitBytes + 1, 0);
  EXPECT_EQ(d->put(UnitKey{}, big.data(), kMaxUnitBytes + 1), UnitStatus::Invalid);
}

TEST(DriveStore, TornTailIsCutAndEarlierUnitsStay) {
  ScratchDir dir("scaleout");
  const std::string p = dir.path + "/d.units";
  uint64_t good_end = 0;
  {
    auto d = open_drive(p);
    auto b = bytes(4096, 1);
    ASSERT_EQ(d->put(UnitKey{1, 0, 0, 0}, b.data(), 4096), UnitStatus::Ok);
    good_end = d->log_bytes();
    ASSERT_EQ(d->put(UnitKey{1, 0, 0, 1}, b.data(), 4096), UnitStatus::Ok);
  }
  // A crash halfway through the second record's payload.
  ASSERT_EQ(::truncate(p.c_str(), static_cast<off_t>(good_end + kUnitRecordHeaderBytes + 100)), 0);
  auto d = open_drive(p, false);
  std::vector<uint8_t> out;
  EXPECT_EQ(d->get(UnitKey{1, 0, 0, 0}, &out), UnitStatus::Ok);
  EXPECT_EQ(d->get(UnitKey{1, 0, 0, 1}, &out), UnitStatus::NotFound);
  EXPECT_EQ(d->log_bytes(), good_end);
  EXPECT_EQ(std::filesystem::file_size(p), good_end);
  // Appends continue cleanly after the cut.
  auto b = bytes(10, 5);
  ASSERT_EQ(d->put(UnitKey{1, 0, 0, 2}, b.data(), 10), UnitStatus::Ok);
  d.reset();
  d = open_drive(p, false);
  EXPECT_EQ(d->get(UnitKey{1, 0, 0, 2}, &out), UnitStatus::Ok);
  EXPECT_EQ(out, b);
}

TEST(DriveStore, FlippedPayloadBitIsCorruptNotWrongData) {
  ScratchDir dir("scaleout");
  const std::string p = dir.path + "/d.units";
  auto d = open_drive(p);
  auto b = bytes(8192, 3);
  ASSERT_EQ(d->put(UnitKey{1, 0, 0, 0}, b.data(), 8192), UnitStatus::Ok);
  ASSERT_EQ(d->put(UnitKey{1, 0, 0, 1}, b.data(), 8192), UnitStatus::Ok);
  int fd = ::open(p.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  const off_t at = static_cast<off_t>(kDriveHeaderBytes + kUnitRecordHeaderBytes + 777);
  uint8_t c = 0;
  ASSERT_EQ(::pread(fd, &c, 1, at), 1);
  c ^= 0x10;
  ASSERT_EQ(::pwrite(fd, &c, 1, at), 1);
  ::close(fd);
  std::vector<uint8_t> out;
  EXPECT_EQ(d->get(UnitKey{1, 0, 0, 0}, &out), UnitStatus::Corrupt);
  EXPECT_EQ(d->get(UnitKey{1, 0, 0, 1}, &out), UnitStatus::Ok);
  // After a restart the corrupt unit is still known (the scrub finds it), and still corrupt.
  d.reset();
  d = open_drive(p, false);
  EXPECT_EQ(d->keys().size(), 2u);
  EXPECT_EQ(d->get(UnitKey{1, 0, 0, 0}, &out), UnitStatus::Corrupt);
  EXPECT_EQ(d->get(UnitKey{1, 0, 0, 1}, &out), UnitStatus::Ok);
}

// A compaction runs while clients put, delete and read on the same drive: they never wait for
// it (the drive's lock is held only for the catch-up of what changed meanwhile), and what they
// did during it is all there afterwards, also after a reopen: a unit put during the copy is
// kept, a unit deleted during it does not come back.
TEST(DriveStore, CompactionRunsAlongsideClientIoWithoutStallingIt) {
  ScratchDir dir("scaleout");
  const std::string p = dir.path + "/d.units";
  auto d = open_drive(p);
  std::map<UnitKey, std::vector<uint8_t>> want;
  for (uint16_t i = 0; i < 200; ++i) {
    auto b = bytes(65536, uint8_t(i));
    ASSERT_EQ(d->put(UnitKey{1, 0, 0, i}, b.data(), 65536), UnitStatus::Ok);
    if (i % 4 == 0) want[UnitKey{1, 0, 0, i}] = b;
  }
  for (uint16_t i = 0; i < 200; ++i) {
    if (i % 4 == 0) continue;
    ASSERT_EQ(d->remove(UnitKey{1, 0, 0, i}), UnitStatus::Ok);
  }
  EXPECT_GT(d->garbage_bytes(), 140u * 65536);
  // 50 live units of 64 KiB copied at 4 MiB/s: about 0.8 s of compaction.
  std::atomic<bool> compacting{true};
  UnitStatus compacted = UnitStatus::IoError;
  const auto t0 = std::chrono::steady_clock::now();
  std::thread compactor([&] {
    compacted = d->compact(4u << 20);
    compacting = false;
  });
  int64_t worst_us = 0;
  int ops = 0;
  uint64_t removed = 0;
  for (uint16_t i = 0; compacting && i < 2000; ++i, ++ops) {
    const auto a = std::chrono::steady_clock::now();
    auto b = bytes(4096, uint8_t(i + 7));
    const UnitKey fresh{2, 0, 0, i};
    ASSERT_EQ(d->put(fresh, b.data(), 4096), UnitStatus::Ok);
    want[fresh] = b;
    const UnitKey old{1, 0, 0, uint16_t((i % 50) * 4)};
    if (i % 10 == 0 && want.count(old)) {
      ASSERT_EQ(d->remove(old), UnitStatus::Ok);
      want.erase(old);
      ++removed;
    }
    std::vector<uint8_t> out;
    ASSERT_EQ(d->get(fresh, &out), UnitStatus::Ok);
    worst_us = std::max<int64_t>(worst_us, std::chrono::duration_cast<std::chrono::microseconds>(
                                               std::chrono::steady_clock::now() - a).count());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  compactor.join();
  const int64_t took_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(compacted, UnitStatus::Ok);
  EXPECT_GE(took_ms, 500) << "the throttle did not hold";
  EXPECT_GT(ops, 20);
  EXPECT_LT(worst_us, 200000) << "a client call waited " << worst_us << " us for the compaction";
  EXPECT_EQ(d->compactions(), 1u);
  // Only what was deleted during the copy is left (its copied record and its delete record).
  EXPECT_LE(d->garbage_bytes(), removed * (65536 + 3 * kUnitRecordHeaderBytes));
  EXPECT_LT(d->garbage_bytes(), 140u * 65536);
  auto check = [&](DriveStore& drive, const char* when) {
    std::vector<UnitKey> keys = drive.keys();
    EXPECT_EQ(keys.size(), want.size()) << when;
    for (const auto& [k, b] : want) {
      std::vector<uint8_t> out;
      ASSERT_EQ(drive.get(k, &out), UnitStatus::Ok) << when;
      EXPECT_EQ(out, b) << when;
    }
  };
  check(*d, "after the compaction");
  d.reset();
  d = open_drive(p, false);
  check(*d, "reopened");
}

TEST(DriveCompaction, PicksTheDriveWithMostGarbagePastBothThresholds) {
  CompactionPolicy policy;
  policy.min_garbage_bytes = 100;
  policy.min_garbage_ratio = 0.5;
  EXPECT_EQ(pick_drive_to_compact({}, policy), -1);
  EXPECT_EQ(pick_drive_to_compact({{0, 1000, 400, true}, {1, 150, 99, true}}, policy), -1);
  EXPECT_EQ(pick_drive_to_compact({{0, 1000, 600, true}, {1, 4000, 2500, true}, {2, 9000, 9000, false}}, policy), 1);
  EXPECT_EQ(pick_drive_to_compact({{0, 1000, 600, true}, {1, 4000, 1900, true}}, policy), 0);
}

TEST(DriveCompaction, ANodeCompactsTheDriveThatIsDueAndNoOther) {
  ScratchDir dir("scaleout");
  std::unique_ptr<NodeUnits> node;
  std::string err;
  ASSERT_TRUE(NodeUnits::open(dir.path, 7, 1, 3, &node, &err)) << err;
  auto b = bytes(32768, 3);
  for (uint16_t i = 0; i < 40; ++i) {
    ASSERT_EQ(node->put(1, UnitKey{1, 0, 0, i}, b.data(), 32768), UnitStatus::Ok);
    ASSERT_EQ(node->put(2, UnitKey{1, 0, 0, i}, b.data(), 32768), UnitStatus::Ok);
  }
  for (uint16_t i = 0; i < 30; ++i) ASSERT_EQ(node->remove(1, UnitKey{1, 0, 0, i}), UnitStatus::Ok);
  for (uint16_t i = 0; i < 10; ++i) ASSERT_EQ(node->remove(2, UnitKey{1, 0, 0, i}), UnitStatus::Ok);
  CompactionPolicy policy;
  policy.min_garbage_bytes = 64 * 1024;
  policy.max_bytes_per_sec = 0;
  const uint64_t other = node->drive(2)->log_bytes();
  EXPECT_EQ(node->compact_if_due(policy), 1);  // 75 % garbage; drive 2 has 25 %
  EXPECT_EQ(node->drive(1)->garbage_bytes(), 0u);
  EXPECT_EQ(node->drive(2)->log_bytes(), other);
  EXPECT_EQ(node->compact_if_due(policy), -1) << "nothing else is due";
  EXPECT_EQ(node->compactions(), 1u);
  EXPECT_GT(node->bytes_reclaimed(), 30u * 32768);
  std::vector<uint8_t> out;
  for (uint16_t i = 30; i < 40; ++i) ASSERT_EQ(node->get(1, UnitKey{1, 0, 0, i}, &out), UnitStatus::Ok);
}

TEST(DriveStore, CompactKeepsLiveUnitsAndShrinks) {
  ScratchDir dir("scaleout");
  const std::string p = dir.path + "/d.units";
  auto d = open_drive(p);
  auto b = bytes(20000, 8);
  for (uint16_t i = 0; i < 20; ++i) ASSERT_EQ(d->put(UnitKey{1, 0, 0, i}, b.data(), 20000), UnitStatus::Ok);
  for (uint16_t i = 0; i < 15; ++i) ASSERT_EQ(d->remove(UnitKey{1, 0, 0, i}), UnitStatus::Ok);
  const uint64_t before = d->log_bytes();
  ASSERT_EQ(d->compact(), UnitStatus::Ok);
  EXPECT_LT(d->log_bytes(), before / 3);
  EXPECT_TRUE(d->check_alive());
  std::vector<uint8_t> out;
  for (uint16_t i = 15; i < 20; ++i) {
    ASSERT_EQ(d->get(UnitKey{1, 0, 0, i}, &out), UnitStatus::Ok);
    EXPECT_EQ(out, b);
  }
  d.reset();
  d = open_drive(p, false);
  EXPECT_EQ(d->keys().size(), 5u);
}

TEST(DriveStore, ForeignOrDamagedHeaderIsRefused) {
  ScratchDir dir("scaleout");
  const std::string p = dir.path + "/d.units";
  open_drive(p);
  std::unique_ptr<DriveStore> d;
  std::string err;
  EXPECT_EQ(DriveStore::open(p, DriveIdentity{7, 2, 0}, false, &d, &err), UnitStatus::DriveFailed);
  EXPECT_EQ(DriveStore::open(dir.path + "/none", DriveIdentity{7, 1, 0}, false, &d, &err),
            UnitStatus::DriveFailed);
}

TEST(DriveStore, SurvivesKill9MidStream) {
  // A child appends and syncs units, reporting each synced count through a pipe, and is
  // killed at a random point; every unit it reported synced must read back intact.
  ScratchDir dir("scaleout");
  const std::string p = dir.path + "/d.units";
  open_drive(p);
  for (int round = 0; round < 3; ++round) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      std::unique_ptr<DriveStore> d;
      std::string err;
      if (DriveStore::open(p, DriveIdentity{7, 1, 0}, false, &d, &err) != UnitStatus::Ok) _exit(2);
      for (uint32_t i = 0;; ++i) {
        auto b = bytes(30000 + i % 1000, static_cast<uint8_t>(i));
        if (d->put(UnitKey{static_cast<uint64_t>(round), i, 0, 0}, b.data(),
                   static_cast<uint32_t>(b.size())) != UnitStatus::Ok) _exit(3);
        if (i % 4 == 3) {
          if (d->sync() != UnitStatus::Ok) _exit(4);
          uint32_t n = i + 1;
          if (::write(fds[1], &n, sizeof n) != sizeof n) _exit(5);
        }
      }
    }
    ::close(fds[1]);
    uint32_t synced = 0, n = 0;
    for (int k = 0; k < 5 + round * 7; ++k) {
      if (::read(fds[0], &n, sizeof n) != sizeof n) break;
      synced = n;
    }
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(fds[0]);
    ASSERT_GT(synced, 0u);
    auto d = open_drive(p, false);
    std::vector<uint8_t> out;
    for (uint32_t i = 0; i < synced; ++i) {
      ASSERT_EQ(d->get(UnitKey{static_cast<uint64_t>(round), i, 0, 0}, &out), UnitStatus::Ok) << i;
      ASSERT_EQ(out, bytes(30000 + i % 1000, static_cast<uint8_t>(i)));
    }
  }
}

TEST(NodeUnits, DeletedDriveIsDetectedAndReplaced) {
  ScratchDir dir("scaleout");
  std::unique_ptr<NodeUnits> n;
  std::string err;
  ASSERT_TRUE(NodeUnits::open(dir.path + "/n1", 7, 1, 3, &n, &err)) << err;
  auto b = bytes(100, 1);
  for (uint32_t dr = 0; dr < 3; ++dr) ASSERT_EQ(n->put(dr, UnitKey{1, 0, 0, 0}, b.data(), 100), UnitStatus::Ok);
  std::filesystem::remove(dir.path + "/n1/drive-1.units");
  EXPECT_FALSE(n->drive_healthy(1));
  std::vector<uint8_t> out;
  EXPECT_EQ(n->get(1, UnitKey{1, 0, 0, 0}, &out), UnitStatus::DriveFailed);
  EXPECT_EQ(n->get(0, UnitKey{1, 0, 0, 0}, &out), UnitStatus::Ok);
  n.reset();
  // After a restart the missing drive stays failed: it is never silently re-created empty.
  ASSERT_TRUE(NodeUnits::open(dir.path + "/n1", 7, 1, 3, &n, &err)) << err;
  EXPECT_FALSE(n->drive_healthy(1));
  EXPECT_TRUE(n->drive_healthy(2));
  ASSERT_TRUE(n->replace_drive(1, &err)) << err;
  EXPECT_TRUE(n->drive_healthy(1));
  EXPECT_EQ(n->get(1, UnitKey{1, 0, 0, 0}, &out), UnitStatus::NotFound);
  // Another node's identity is refused.
  std::unique_ptr<NodeUnits> other;
  EXPECT_FALSE(NodeUnits::open(dir.path + "/n1", 7, 2, 3, &other, &err));
}

}  // namespace
}  // namespace nasd::scaleout
