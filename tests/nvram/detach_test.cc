// A volume leaves the journal when it fails over or back: what its file system made durable
// must stay trimmable (or the shared log would fill up), anything newer must be kept for
// whoever opens the volume next, and a stale object's detach must not drop its successor.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <memory>
#include <vector>

#include "nvram/journal.h"
#include "tests/nvram/seq_target.h"
#include "tests/nvram/test_util.h"

namespace nasd::nvram {
namespace {

void append_committed(Journal& j, uint32_t volume, uint64_t seq) {
  auto payload = testing::pattern(seq, 1024);
  std::array<std::span<const uint8_t>, 1> parts{std::span<const uint8_t>(payload)};
  uint64_t ticket = 0;
  ASSERT_EQ(j.append(volume, seq, RecordType::Call, parts, &ticket), fs::Status::Ok);
  ASSERT_EQ(j.wait_committed(ticket), fs::Status::Ok);
}

std::shared_ptr<testing::SeqTarget> attached(Journal& j, uint32_t volume) {
  auto target = std::make_shared<testing::SeqTarget>(volume);
  j.attach(volume, target);
  return target;
}

TEST(JournalDetach, DurableRecordsOfADetachedVolumeAreTrimmedNewerOnesKept) {
  testing::ScratchDir dir;
  auto j = Journal::open(testing::small_options(dir.file("nv"), 4 << 20));
  auto v1 = std::make_shared<testing::SeqTarget>(1);
  j->attach(1, v1);
  for (uint64_t s = 1; s <= 10; ++s) append_committed(*j, 1, s);
  v1->durable = 6;
  j->detach(1, v1.get());
  j->trim();
  EXPECT_EQ(j->stats().live_records, 4u);  // 7..10 wait for the next owner
  EXPECT_EQ(j->stats().records_trimmed, 6u);

  // Reopened: its file system now holds everything; the rest goes.
  auto again = std::make_shared<testing::SeqTarget>(1);
  again->durable = 10;
  j->attach(1, again);
  j->trim();
  EXPECT_EQ(j->stats().live_records, 0u);
}

TEST(JournalDetach, RecordsKeptAtADetachAreHandedToTheNextOpenerInThisProcess) {
  testing::ScratchDir dir;
  auto j = Journal::open(testing::small_options(dir.file("nv"), 4 << 20));
  auto v1 = attached(*j, 1);
  auto other = attached(*j, 2);
  for (uint64_t s = 1; s <= 10; ++s) {
    append_committed(*j, 1, s);
    append_committed(*j, 2, s);
  }
  v1->durable = 6;
  j->detach(1, v1.get());  // abandoned: the file system keeps only what it made durable

  const std::vector<RecordView> kept = j->recovered(1);
  ASSERT_EQ(kept.size(), 4u) << "the acknowledged records 7..10 must wait for the next opener";
  for (size_t i = 0; i < kept.size(); ++i) {
    EXPECT_EQ(kept[i].seq, 7 + i);
    EXPECT_EQ(kept[i].volume, 1u);
    EXPECT_EQ(std::vector<uint8_t>(kept[i].payload.begin(), kept[i].payload.end()),
              testing::pattern(kept[i].seq, 1024));
  }
  EXPECT_EQ(j->max_recovered_seq(1), 10u) << "the next opener would reuse sequence numbers";
  EXPECT_TRUE(j->recovered(2).empty()) << "another volume's records were taken";
}

// A volume taken over by another node leaves records here that only its next opener here may
// drop. The volumes still here write on: those records are carried forward past them (as a
// stuck volume's are) instead of holding back every trim until the log is full.
TEST(JournalDetach, KeptRecordsAreCarriedForwardAndStillFoundByTheNextOpener) {
  testing::ScratchDir dir;
  auto j = Journal::open(testing::churning_options(dir.file("nv")));
  auto away = attached(*j, 1);
  auto here = attached(*j, 2);
  for (uint64_t s = 1; s <= 4; ++s) append_committed(*j, 1, s);
  j->detach(1, away.get());  // its fs made nothing durable: all four wait at the head

  // 1 MiB through a 256 KiB log on the volume still here.
  for (uint64_t s = 1; s <= 1000; ++s) {
    append_committed(*j, 2, s);
    here->durable = s;
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_EQ(j->stats().space_timeouts, 0u) << "the kept records held back the trim";
  EXPECT_NE(j->status().find("records carried forward"), std::string::npos)
      << "1 MiB went through a 256 KiB log without moving the kept records: the test proves "
         "nothing\n" << j->status();

  auto again = std::make_shared<testing::SeqTarget>(1);
  j->attach(1, again);
  const std::vector<RecordView> kept = j->recovered(1);
  ASSERT_EQ(kept.size(), 4u);
  for (size_t i = 0; i < kept.size(); ++i) {
    EXPECT_EQ(kept[i].seq, 1 + i);
    EXPECT_EQ(std::vector<uint8_t>(kept[i].payload.begin(), kept[i].payload.end()),
              testing::pattern(kept[i].seq, 1024));
  }
}

TEST(JournalDetach, AStaleObjectDoesNotDetachItsSuccessor) {
  testing::ScratchDir dir;
  auto j = Journal::open(testing::small_options(dir.file("nv"), 4 << 20));
  auto old_target = std::make_shared<testing::SeqTarget>(2);
  auto new_target = std::make_shared<testing::SeqTarget>(2);
  j->attach(2, old_target);
  j->attach(2, new_target);
  j->detach(2, old_target.get());  // the retired object going away late
  for (uint64_t s = 1; s <= 3; ++s) append_committed(*j, 2, s);
  new_target->durable = 3;
  j->trim();
  EXPECT_EQ(j->stats().live_records, 0u) << "the new target was detached by the old one";
}

}  // namespace
}  // namespace nasd::nvram
