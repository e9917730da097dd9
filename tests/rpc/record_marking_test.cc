#include "server/rpc/record_marking.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <span>

#include "tests/rpc/rpc_test_client.h"

namespace nasd::rpc {
namespace {

using testing::as_record;

std::vector<uint8_t> bytes_of(const Record& r) { return {r.begin(), r.end()}; }

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
  EXPECT_EQ(bytes_of(r.pop_record()), msg);
  EXPECT_FALSE(r.has_record());
  EXPECT_FALSE(r.mid_record());
}

// A record answered on its loop gives its buffer back, and the next record fills that buffer:
// no allocation per call for the record, and none of the old bytes survive in the new one.
TEST(RecordReassembler, FillsTheBufferOfARecycledRecord) {
  (void)spare_record();  // this thread's spare, left by another test, is not this test's
  RecordReassembler r(1 << 20);
  ASSERT_TRUE(r.feed(as_record(pattern(300, 1))));
  Record first = r.pop_record();
  const uint8_t* buffer = first.data();
  recycle_record(std::move(first));

  auto msg = pattern(200, 9);
  ASSERT_TRUE(r.feed(as_record(msg)));
  Record second = r.pop_record();
  EXPECT_EQ(second.data(), buffer) << "the recycled buffer was not reused";
  EXPECT_EQ(bytes_of(second), msg);

  // Without a spare the next record has a buffer of its own; a huge one is never kept.
  ASSERT_TRUE(r.feed(as_record(msg)));
  EXPECT_NE(r.pop_record().data(), second.data());
  Record huge(Record::Bytes(kMaxSpareRecordBytes + 1));
  recycle_record(std::move(huge));
  EXPECT_EQ(spare_record().capacity(), 0u);
}

// A locator that finds a payload at byte 100 of records whose first byte is 0xAB, and counts
// how often it was asked.
struct FixedLocator {
  size_t* asked;
  std::optional<size_t> operator()(std::span<const uint8_t> head) const {
    ++*asked;
    if (head.empty() || head[0] != 0xAB) return std::nullopt;
    return 100;
  }
};

std::vector<uint8_t> located_record(size_t n) {
  auto msg = pattern(n, 5);
  msg[0] = 0xAB;
  return msg;
}

// A large record whose payload the locator finds is assembled in a page run with the payload
// on a page boundary, whether its body arrives through feed() or straight into body_window().
TEST(RecordReassembler, PlacesALocatedPayloadOnAPageBoundary) {
  for (bool in_place : {false, true}) {
    SCOPED_TRACE(in_place ? "body received in place" : "body fed");
    size_t asked = 0;
    RecordReassembler r(1 << 20, FixedLocator{&asked});
    const auto msg = located_record(200 * 1024 + 3);
    const auto bytes = as_record(msg);
    const size_t first = 4 + 1000;  // the header and the first bytes, as one recv brings them
    ASSERT_TRUE(r.feed({bytes.data(), first}));
    if (in_place) {
      std::span<uint8_t> window = r.body_window(1);
      ASSERT_EQ(window.size(), bytes.size() - first);
      std::copy(bytes.begin() + first, bytes.end(), window.begin());
      r.body_received(window.size());
    } else {
      ASSERT_TRUE(r.feed({bytes.data() + first, bytes.size() - first}));
    }
    ASSERT_TRUE(r.has_record());
    Record record = r.pop_record();
    ASSERT_NE(record.pages(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(record.data() + 100) % util::PageRun::kPageSize, 0u);
    EXPECT_EQ(bytes_of(record), msg);
    EXPECT_EQ(asked, 1u);
    (void)spare_record();
    recycle_record(std::move(record));  // a run goes back to its own pool, not to the spare
    EXPECT_EQ(spare_record().capacity(), 0u);
  }
}

// Everything else keeps the plain buffer: no payload found, a small record, a record of
// several fragments, or a head too short to tell.
TEST(RecordReassembler, OtherRecordsStayInPlainBuffers) {
  size_t asked = 0;
  RecordReassembler r(1 << 20, FixedLocator{&asked});
  auto unlocated = pattern(200 * 1024, 1);
  unlocated[0] = 0x01;
  ASSERT_TRUE(r.feed(as_record(unlocated)));
  Record a = r.pop_record();
  EXPECT_EQ(a.pages(), nullptr);
  EXPECT_EQ(bytes_of(a), unlocated);
  EXPECT_EQ(asked, 1u);

  ASSERT_TRUE(r.feed(as_record(located_record(kMinPageRunRecord - 1))));
  EXPECT_EQ(r.pop_record().pages(), nullptr);
  EXPECT_EQ(asked, 1u) << "a small record needs no locator";

  const auto split = located_record(200 * 1024);
  ASSERT_TRUE(r.feed(as_record(split, {150 * 1024})));
  Record b = r.pop_record();
  EXPECT_EQ(b.pages(), nullptr);
  EXPECT_EQ(bytes_of(b), split);

  // Only the header arrived with the first recv: nothing to locate, so a plain buffer.
  const auto late = as_record(located_record(200 * 1024));
  ASSERT_TRUE(r.feed({late.data(), 4}));
  ASSERT_TRUE(r.feed({late.data() + 4, late.size() - 4}));
  EXPECT_EQ(r.pop_record().pages(), nullptr);
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
  EXPECT_EQ(bytes_of(r.pop_record()), msg);
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
  for (const auto& m : msgs) EXPECT_EQ(bytes_of(r.pop_record()), m);
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

// What a transport does: recv() into the record itself whenever a large rest of a fragment is
// announced, else into a staging buffer that feed() copies from. Chunks of `chunk` bytes.
void deliver_like_a_socket(RecordReassembler& r, std::span<const uint8_t> stream, size_t chunk,
                           size_t in_place_min, size_t* in_place_bytes) {
  size_t pos = 0;
  while (pos < stream.size()) {
    std::span<uint8_t> window = r.body_window(in_place_min);
    if (!window.empty()) {
      size_t n = std::min({window.size(), chunk, stream.size() - pos});
      std::copy_n(stream.data() + pos, n, window.data());
      r.body_received(n);
      *in_place_bytes += n;
      pos += n;
    } else {
      size_t n = std::min(chunk, stream.size() - pos);
      ASSERT_TRUE(r.feed(stream.subspan(pos, n)));
      pos += n;
    }
  }
}

TEST(RecordReassembler, LargeBodiesAreReceivedInPlaceAndRecordsComeOutWhole) {
  // A 1 MiB call in two fragments, a small call, another large one: cut at 64 KiB like
  // recv()s, and at odd sizes so that headers straddle the chunks.
  std::vector<std::vector<uint8_t>> msgs = {pattern(1 << 20, 1), pattern(100, 2),
                                             pattern(300000, 3)};
  std::vector<uint8_t> stream = as_record(msgs[0], {600000, (1 << 20) - 600000});
  for (size_t i = 1; i < msgs.size(); ++i) {
    auto rec = as_record(msgs[i]);
    stream.insert(stream.end(), rec.begin(), rec.end());
  }
  for (size_t chunk : {size_t{65536}, size_t{7777}, size_t{1}}) {
    RecordReassembler r(2 << 20);
    size_t in_place = 0;
    deliver_like_a_socket(r, stream, chunk, 16384, &in_place);
    ASSERT_EQ(r.ready_count(), msgs.size()) << "chunk " << chunk;
    for (const auto& m : msgs) EXPECT_EQ(bytes_of(r.pop_record()), m) << "chunk " << chunk;
    EXPECT_FALSE(r.mid_record());
    // Most of the large bodies never went through feed().
    if (chunk > 1) {
      EXPECT_GT(in_place, size_t{1000000}) << "chunk " << chunk;
    }
  }
}

TEST(RecordReassembler, NoWindowForSmallRestsHeadersOrAFailedStream) {
  RecordReassembler r(4096);
  EXPECT_TRUE(r.body_window(1).empty());  // nothing announced yet
  auto rec = as_record(pattern(3000));
  ASSERT_TRUE(r.feed({rec.data(), 2}));
  EXPECT_TRUE(r.body_window(1).empty());  // half a header
  ASSERT_TRUE(r.feed({rec.data() + 2, 2}));
  EXPECT_EQ(r.body_window(1).size(), 3000u);
  EXPECT_TRUE(r.body_window(3001).empty());  // less left than the caller wants in place
  ASSERT_TRUE(r.feed({rec.data() + 4, rec.size() - 4}));
  EXPECT_TRUE(r.has_record());
  EXPECT_TRUE(r.body_window(1).empty());
  uint8_t huge[4] = {0x80, 0x01, 0x00, 0x00};  // 64 KiB > the bound
  EXPECT_FALSE(r.feed(huge));
  EXPECT_TRUE(r.body_window(1).empty());
}

}  // namespace
}  // namespace nasd::rpc
