// Record encoding, CRC32C and detection of torn or stale records; the operation codec.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>

#include "nvram/crc32c.h"
#include "nvram/op_codec.h"
#include "nvram/record.h"
#include "tests/nvram/test_util.h"

namespace nasd::nvram {
namespace {

TEST(Crc32c, KnownVectorAndBothPathsAgree) {
  const char* check = "123456789";
  EXPECT_EQ(crc32c(check, 9), 0xE3069283u);  // the standard CRC-32C check value
  auto data = testing::pattern(7, 10007);
  for (size_t cut : {0ul, 1ul, 5ul, 4096ul, 10007ul}) {
    uint32_t a = crc32c_extend(crc32c(data.data(), cut), data.data() + cut, data.size() - cut);
    uint32_t b = crc32c_extend_portable(crc32c_extend_portable(0, data.data(), cut),
                                        data.data() + cut, data.size() - cut);
    EXPECT_EQ(a, b) << "cut " << cut;
    EXPECT_EQ(a, crc32c(data.data(), data.size()));
  }
}

class RecordTest : public ::testing::Test {
 protected:
  void encode(uint64_t pos, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    buf.assign(record_footprint(a.size() + b.size()), 0xAA);
    RecordKey key{pos, 42, 3, 9, RecordType::Write};
    std::array<std::span<const uint8_t>, 2> parts{std::span<const uint8_t>(a),
                                                  std::span<const uint8_t>(b)};
    encode_record(buf.data(), key, parts);
  }
  std::vector<uint8_t> buf;
};

TEST_F(RecordTest, RoundTripsHeaderAndGatheredPayload) {
  auto a = testing::pattern(1, 13), b = testing::pattern(2, 4096);
  encode(8192, a, b);
  EXPECT_EQ(buf.size() % kRecordAlign, 0u);
  RecordView v;
  ASSERT_EQ(decode_record(buf.data(), buf.size(), 8192, &v), DecodeResult::Ok);
  EXPECT_EQ(v.seq, 42u);
  EXPECT_EQ(v.volume, 3u);
  EXPECT_EQ(v.epoch, 9u);
  EXPECT_EQ(v.type, RecordType::Write);
  ASSERT_EQ(v.payload.size(), a.size() + b.size());
  EXPECT_TRUE(std::equal(a.begin(), a.end(), v.payload.begin()));
  EXPECT_TRUE(std::equal(b.begin(), b.end(), v.payload.begin() + 13));
  EXPECT_EQ(v.end(), 8192 + buf.size());
}

TEST_F(RecordTest, AnyFlippedByteMakesItTornOrNotARecord) {
  auto a = testing::pattern(3, 100);
  encode(0, a, {});
  std::mt19937 rng(5);
  for (int i = 0; i < 200; ++i) {
    auto copy = buf;
    size_t at = rng() % (sizeof(RecordHeader) + a.size());
    copy[at] ^= static_cast<uint8_t>(1 + rng() % 255);
    RecordView v;
    DecodeResult r = decode_record(copy.data(), copy.size(), 0, &v);
    EXPECT_NE(r, DecodeResult::Ok) << "flipped byte " << at;
  }
}

TEST_F(RecordTest, HalfWrittenRecordIsTorn) {
  auto a = testing::pattern(4, 4096);
  encode(0, a, {});
  // A crash in the middle of the copy: header present, the payload's tail still old bytes.
  std::memset(buf.data() + sizeof(RecordHeader) + 2048, 0, 2048);
  RecordView v;
  EXPECT_EQ(decode_record(buf.data(), buf.size(), 0, &v), DecodeResult::Torn);
}

TEST_F(RecordTest, StaleLapAndTruncationAreRejected) {
  auto a = testing::pattern(5, 64);
  encode(4096, a, {});
  RecordView v;
  // The same bytes found one lap later are a leftover, not the record for that position.
  EXPECT_EQ(decode_record(buf.data(), buf.size(), 4096 + 65536, &v), DecodeResult::NoRecord);
  EXPECT_EQ(decode_record(buf.data(), buf.size() - 8, 4096, &v), DecodeResult::TooLong);
  std::vector<uint8_t> zeros(128, 0);
  EXPECT_EQ(decode_record(zeros.data(), zeros.size(), 0, &v), DecodeResult::NoRecord);
}

TEST(OpCodec, RoundTripsEveryField) {
  JournalOp op;
  op.type = RecordType::Rename;
  op.cred.uid = 1000;
  op.cred.gid = 100;
  op.cred.gids = {4, 24, 27};
  op.object = {17, 3};
  op.object2 = {18, 1};
  op.name = "old name";
  op.name2 = "new";
  op.sattr.mode = 0640;
  op.sattr.size = 12345;
  op.sattr.mtime_how = fs::TimeHow::ClientTime;
  op.sattr.mtime = {1700000000, 5};
  op.verifier = 0xdeadbeef;
  std::vector<uint8_t> prefix;
  encode_op_prefix(op, &prefix);
  patch_created(&prefix, {99, 7});
  JournalOp back;
  std::string err;
  ASSERT_TRUE(decode_op(RecordType::Rename, prefix, &back, &err)) << err;
  EXPECT_EQ(back.cred.uid, 1000u);
  EXPECT_EQ(back.cred.gids, op.cred.gids);
  EXPECT_EQ(back.object, op.object);
  EXPECT_EQ(back.object2, op.object2);
  EXPECT_EQ(back.name, "old name");
  EXPECT_EQ(back.name2, "new");
  EXPECT_EQ(back.sattr.mode, std::optional<uint32_t>(0640));
  EXPECT_FALSE(back.sattr.uid.has_value());
  EXPECT_EQ(back.sattr.size, std::optional<uint64_t>(12345));
  EXPECT_EQ(back.sattr.mtime_how, fs::TimeHow::ClientTime);
  EXPECT_EQ(back.sattr.mtime, op.sattr.mtime);
  EXPECT_EQ(back.verifier, 0xdeadbeefu);
  ASSERT_TRUE(back.created.has_value());
  EXPECT_EQ(*back.created, (fs::InodeId{99, 7}));
}

TEST(OpCodec, WriteDataFollowsThePrefix) {
  JournalOp op;
  op.type = RecordType::Write;
  op.object = {5, 1};
  op.offset = 1 << 20;
  std::vector<uint8_t> payload;
  encode_op_prefix(op, &payload);
  auto data = testing::pattern(9, 4096);
  payload.insert(payload.end(), data.begin(), data.end());
  JournalOp back;
  std::string err;
  ASSERT_TRUE(decode_op(RecordType::Write, payload, &back, &err)) << err;
  EXPECT_EQ(back.offset, 1u << 20);
  ASSERT_EQ(back.data.size(), data.size());
  EXPECT_TRUE(std::equal(data.begin(), data.end(), back.data.begin()));
}

TEST(OpCodec, GarbageIsRejectedNotTrusted) {
  std::mt19937 rng(11);
  JournalOp op;
  op.type = RecordType::Create;
  op.name = "file";
  std::vector<uint8_t> good;
  encode_op_prefix(op, &good);
  std::string err;
  JournalOp out;
  EXPECT_FALSE(decode_op(RecordType::Pad, good, &out, &err));
  for (size_t cut = 0; cut < good.size(); ++cut) {
    std::vector<uint8_t> shorter(good.begin(), good.begin() + static_cast<long>(cut));
    EXPECT_FALSE(decode_op(RecordType::Create, shorter, &out, &err)) << "cut " << cut;
  }
  for (int i = 0; i < 500; ++i) {
    std::vector<uint8_t> junk(rng() % 300);
    for (auto& b : junk) b = static_cast<uint8_t>(rng());
    decode_op(RecordType::Mkdir, junk, &out, &err);  // must not crash or over-read
  }
}

}  // namespace
}  // namespace nasd::nvram
