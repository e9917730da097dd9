// The circular log: wraparound, recovery scans, torn last records and stale leftovers.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <random>

#include "nvram/journal.h"
#include "nvram/log_layout.h"
#include "nvram/region_copy.h"
#include "tests/nvram/seq_target.h"
#include "tests/nvram/test_util.h"

namespace nasd::nvram {
namespace {

using testing::pattern;

constexpr uint64_t kLog = 16384;
constexpr uint64_t kRegion = kRegionHeaderSize + kLog;

uint64_t append_one(Journal& j, uint64_t seq, size_t size) {
  auto payload = pattern(seq, size);
  std::array<std::span<const uint8_t>, 1> parts{std::span<const uint8_t>(payload)};
  uint64_t ticket = 0;
  EXPECT_EQ(j.append(0, seq, RecordType::Call, parts, &ticket), fs::Status::Ok);
  EXPECT_EQ(j.wait_committed(ticket), fs::Status::Ok);
  return ticket;
}

void expect_recovered(Journal& j, const std::vector<std::pair<uint64_t, size_t>>& want) {
  auto got = j.recovered(0);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].seq, want[i].first);
    auto p = pattern(want[i].first, want[i].second);
    ASSERT_EQ(got[i].payload.size(), p.size()) << "seq " << want[i].first;
    EXPECT_TRUE(std::equal(p.begin(), p.end(), got[i].payload.begin())) << "seq " << want[i].first;
  }
}

// Overwrites `n` bytes at log position `pos` of a closed region file.
void scribble(const std::string& path, uint64_t pos, size_t n) {
  int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> junk(n, 0x5A);
  ASSERT_EQ(pwrite(fd, junk.data(), n, static_cast<off_t>(kRegionHeaderSize + pos % kLog)),
            static_cast<ssize_t>(n));
  close(fd);
}

TEST(CircularLog, WrapsManyTimesAndRecoversExactlyTheLiveRecords) {
  testing::ScratchDir dir;
  auto opts = testing::small_options(dir.file("nv"), kRegion);
  auto target = std::make_shared<testing::SeqTarget>(0);
  std::mt19937 rng(1);
  std::vector<std::pair<uint64_t, size_t>> sizes;
  uint64_t last_ticket = 0;
  {
    auto j = Journal::open(opts);
    j->attach(0, target);
    for (uint64_t seq = 1; seq <= 400; ++seq) {
      size_t size = 1 + rng() % 3000;
      sizes.emplace_back(seq, size);
      last_ticket = append_one(*j, seq, size);
      if (seq > 3) target->durable = seq - 3;  // the fs absorbed all but the last three
      j->trim();
    }
    EXPECT_GT(last_ticket, 20 * kLog) << "the log should have wrapped many times";
    EXPECT_EQ(j->stats().live_records, 3u);
  }
  auto j = Journal::open(opts);
  expect_recovered(*j, {sizes[397], sizes[398], sizes[399]});
}

// A takeover copies only the live part of its mirror (nvram/region_copy.h): the copy recovers
// exactly the records the image itself recovers, wherever in its lap the live range lies
// (wrapped around the end of the log too), and copies no more than the header and that range.
TEST(CircularLog, ALiveCopyRecoversWhatTheImageRecovers) {
  testing::ScratchDir dir;
  auto opts = testing::small_options(dir.file("nv"), kRegion);
  auto target = std::make_shared<testing::SeqTarget>(0);
  std::mt19937 rng(7);
  bool wrapped_copy = false;
  auto j = Journal::open(opts);
  j->attach(0, target);
  uint64_t seq = 0;
  for (int round = 0; round < 120; ++round) {
    for (uint64_t k = 0; k < 1 + rng() % 4; ++k) {
      append_one(*j, ++seq, 1 + rng() % 2000);
      if (seq > 4) target->durable = seq - 4;  // all but the last four absorbed
      j->trim();
    }
    // The whole image (the old takeover copy) and the live copy, each opened as a journal.
    std::string error;
    std::filesystem::copy_file(opts.path, dir.file("whole"),
                               std::filesystem::copy_options::overwrite_existing);
    LiveCopyStats stats;
    ASSERT_TRUE(copy_live_region(opts.path, dir.file("live"), &stats, &error)) << error;
    EXPECT_EQ(stats.region_size, kRegion);
    EXPECT_EQ(stats.copied, kRegionHeaderSize + (stats.end - stats.head));
    EXPECT_LT(stats.end - stats.head, kLog / 2) << "only the few live records";
    wrapped_copy |= stats.head / kLog != (stats.end - 1) / kLog;
    auto whole_opts = opts, live_opts = opts;
    whole_opts.path = dir.file("whole");
    live_opts.path = dir.file("live");
    auto whole = Journal::open(whole_opts);
    auto live = Journal::open(live_opts);
    auto want = whole->recovered(0);
    auto got = live->recovered(0);
    ASSERT_EQ(got.size(), want.size()) << "after seq " << seq;
    ASSERT_GE(got.size(), 1u);
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].seq, want[i].seq);
      EXPECT_TRUE(std::equal(want[i].payload.begin(), want[i].payload.end(), got[i].payload.begin(),
                             got[i].payload.end()))
          << "seq " << want[i].seq;
    }
  }
  EXPECT_GT(seq * 1000, 4 * kLog) << "the log should have wrapped several times";
  EXPECT_TRUE(wrapped_copy) << "some copy should have had its live range wrap around the log's end";
  std::string error;
  EXPECT_FALSE(copy_live_region(dir.file("missing"), dir.file("copy2"), nullptr, &error));
  EXPECT_NE(error.find("missing"), std::string::npos) << error;
}

TEST(CircularLog, FullLogRecoversEveryRecord) {
  testing::ScratchDir dir;
  auto opts = testing::small_options(dir.file("nv"), kRegion);
  std::vector<std::pair<uint64_t, size_t>> want;
  {
    auto j = Journal::open(opts);
    // Nobody trims: fill it up to the last record that fits.
    for (uint64_t seq = 1; seq <= 100; ++seq) {
      auto payload = pattern(seq, 1000);
      std::array<std::span<const uint8_t>, 1> parts{std::span<const uint8_t>(payload)};
      uint64_t t;
      if (j->stats().used_bytes + record_footprint(1000) > kLog) break;
      ASSERT_EQ(j->append(0, seq, RecordType::Call, parts, &t), fs::Status::Ok);
      ASSERT_EQ(j->wait_committed(t), fs::Status::Ok);
      want.emplace_back(seq, 1000);
    }
  }
  auto j = Journal::open(opts);
  expect_recovered(*j, want);
}

TEST(CircularLog, TornLastRecordIsDiscardedAndItsSpaceReused) {
  testing::ScratchDir dir;
  auto opts = testing::small_options(dir.file("nv"), kRegion);
  uint64_t t4;
  {
    auto j = Journal::open(opts);
    for (uint64_t seq = 1; seq <= 4; ++seq) t4 = append_one(*j, seq, 500);
  }
  // A crash in the middle of copying record 4.
  scribble(opts.path, t4 - 100, 50);
  {
    auto j = Journal::open(opts);
    expect_recovered(*j, {{1, 500}, {2, 500}, {3, 500}});
    append_one(*j, 5, 700);
  }
  auto j = Journal::open(opts);
  expect_recovered(*j, {{1, 500}, {2, 500}, {3, 500}, {5, 700}});
}

TEST(CircularLog, ValidLeftoverOfAnEarlierRunIsNotRevived) {
  testing::ScratchDir dir;
  auto opts = testing::small_options(dir.file("nv"), kRegion);
  uint64_t t2;
  {
    auto j = Journal::open(opts);
    append_one(*j, 1, 300);
    t2 = append_one(*j, 2, 300);
    append_one(*j, 3, 300);  // stays intact after record 2 is torn
  }
  scribble(opts.path, t2 - 50, 8);
  {
    auto j = Journal::open(opts);
    expect_recovered(*j, {{1, 300}});
    // Same size as record 2, so record 3 of the first run sits exactly where the next one goes.
    append_one(*j, 4, 300);
  }
  auto j = Journal::open(opts);
  expect_recovered(*j, {{1, 300}, {4, 300}});
}

TEST(CircularLog, OversizedRecordIsAnErrorNotAHang) {
  testing::ScratchDir dir;
  auto j = Journal::open(testing::small_options(dir.file("nv"), kRegion));
  std::vector<uint8_t> big(j->max_payload() + 1);
  std::array<std::span<const uint8_t>, 1> parts{std::span<const uint8_t>(big)};
  uint64_t t;
  EXPECT_EQ(j->append(0, 1, RecordType::Call, parts, &t), fs::Status::Io);
  std::vector<uint8_t> fits(j->max_payload());
  parts[0] = fits;
  EXPECT_EQ(j->append(0, 1, RecordType::Call, parts, &t), fs::Status::Ok);
}

TEST(CircularLog, RegionOfAnotherSizeIsRefusedWithAClearError) {
  testing::ScratchDir dir;
  auto opts = testing::small_options(dir.file("nv"), kRegion);
  { auto j = Journal::open(opts); }
  opts.size = 2 * kRegion;
  try {
    Journal::open(opts);
    FAIL() << "opened a region with the wrong size";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(opts.path), std::string::npos) << e.what();
  }
  opts.size = kRegion;
  int fd = ::open(opts.path.c_str(), O_WRONLY);
  ASSERT_EQ(pwrite(fd, "garbage!", 8, 0), 8);
  close(fd);
  EXPECT_THROW(Journal::open(opts), std::runtime_error);
}

}  // namespace
}  // namespace nasd::nvram
