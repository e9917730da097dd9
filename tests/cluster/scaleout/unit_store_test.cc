// Drive stores: recovery by scanning, torn tails, checksums, lost and foreign drives.
#include "cluster/scaleout/unit_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <random>

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
