#include "server/rpc/record_marking.h"

#include <gtest/gtest.h>

#include <numeric>

#include "tests/rpc/rpc_test_client.h"

namespace nasd::rpc {
namespace {

using testing::as_record;

std::vector<uint8_t> pattern(size_t n, uint8_t seed = 0) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

TEST(RecordMarking, WritesLastFragmentMark) {
  uint8_t mark[4];
  write_record_mark(mark, 0x123456);
  EXPECT_EQ(mark[0], 0x80);
  EXPECT_EQ(mark[1], 0x12);
  EXPECT_EQ(mark[2], 0x34);
  EXPECT_EQ(mark[3], 0x56);
}

TEST(RecordReassembler, SingleFragmentInOneFeed) {
  RecordReassembler r(1024);
  auto msg = pattern(100);
  ASSERT_TRUE(r.feed(as_record(msg)));
  ASSERT_TRUE(r.has_record());
  EXPECT_EQ(r.pop_record(), msg);
  EXPECT_FALSE(r.has_record());
  EXPECT_FALSE(r.mid_record());
}

TEST(RecordReassembler, ManyFragmentsFedOneByteAtATime) {
  RecordReassembler r(1 << 20);
  auto msg = pattern(5000, 3);
  std::vector<size_t> cuts = {1, 2, 3, 0, 700, 1, 4093};  // includes an empty fragment
  auto bytes = as_record(msg, cuts);
  for (size_t i = 0; i < bytes.size(); ++i) {
    EXPECT_FALSE(r.has_record()) << "record completed early at byte " << i;
    ASSERT_TRUE(r.feed({&bytes[i], 1}));
  }
  ASSERT_TRUE(r.has_record());
  EXPECT_EQ(r.pop_record(), msg);
}

TEST(RecordReassembler, SeveralRecordsInOneFeedKeepOrder) {
  RecordReassembler r(1 << 16);
  std::vector<uint8_t> stream;
  std::vector<std::vector<uint8_t>> msgs;
  for (int i = 0; i < 50; ++i) {
    msgs.push_back(pattern(static_cast<size_t>(i * 13 + 1), static_cast<uint8_t>(i)));
    auto rec = as_record(msgs.back(), {static_cast<size_t>(i % 5)});
    stream.insert(stream.end(), rec.begin(), rec.end());
  }
  // Split the stream at an awkward point in the middle of a header.
  ASSERT_TRUE(r.feed({stream.data(), 2}));
  ASSERT_TRUE(r.feed({stream.data() + 2, stream.size() - 2}));
  ASSERT_EQ(r.ready_count(), msgs.size());
  for (const auto& m : msgs) EXPECT_EQ(r.pop_record(), m);
}

TEST(RecordReassembler, ZeroLengthRecord) {
  RecordReassembler r(16);
  uint8_t empty_last[4] = {0x80, 0, 0, 0};
  ASSERT_TRUE(r.feed(empty_last));
  ASSERT_TRUE(r.has_record());
  EXPECT_TRUE(r.pop_record().empty());
}

TEST(RecordReassembler, RecordAtTheBoundIsAccepted) {
  RecordReassembler r(4096);
  auto msg = pattern(4096);
  ASSERT_TRUE(r.feed(as_record(msg, {1000, 1000, 1000})));
  ASSERT_TRUE(r.has_record());
  EXPECT_EQ(r.pop_record().size(), 4096u);
}

TEST(RecordReassembler, OversizedSingleFragmentFailsBeforeBuffering) {
  RecordReassembler r(4096);
  uint8_t header[4] = {0x80, 0x00, 0x10, 0x01};  // 4097 bytes announced
  EXPECT_FALSE(r.feed(header));
  EXPECT_TRUE(r.failed());
  EXPECT_FALSE(r.feed(pattern(10)));  // sticky
}

TEST(RecordReassembler, OversizedAcrossFragmentsFails) {
  RecordReassembler r(4096);
  auto msg = pattern(5000);
  EXPECT_FALSE(r.feed(as_record(msg, {2048, 2048})));
  EXPECT_TRUE(r.failed());
  EXPECT_FALSE(r.has_record());
}

TEST(RecordReassembler, HugeAnnouncedLengthFails) {
  RecordReassembler r(2 << 20);
  uint8_t header[4] = {0xff, 0xff, 0xff, 0xff};
  EXPECT_FALSE(r.feed(header));
}

TEST(RecordReassembler, PartialRecordIsHeld) {
  RecordReassembler r(1024);
  auto rec = as_record(pattern(100));
  ASSERT_TRUE(r.feed({rec.data(), 50}));
  EXPECT_FALSE(r.has_record());
  EXPECT_TRUE(r.mid_record());
  ASSERT_TRUE(r.feed({rec.data() + 50, rec.size() - 50}));
  EXPECT_TRUE(r.has_record());
}

}  // namespace
}  // namespace nasd::rpc
