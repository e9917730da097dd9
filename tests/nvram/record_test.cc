// Record encoding, CRC32C and detection of torn, stale or old-format records; the Call payload.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>

#include "nvram/crc32c.h"
#include "fs/call/codec.h"
#include "nvram/call_record.h"
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
    RecordKey key{pos, 42, 3, 9, RecordType::Call};
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
  EXPECT_EQ(v.type, RecordType::Call);
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

TEST_F(RecordTest, AnOlderRecordFormatIsReportedNotTakenForTheEnd) {
  encode(4096, testing::pattern(4, 64), {});
  RecordHeader h;
  std::memcpy(&h, buf.data(), sizeof h);
  h.version = 1;
  std::memcpy(buf.data(), &h, sizeof h);
  RecordView v;
  EXPECT_EQ(decode_record(buf.data(), buf.size(), 4096, &v), DecodeResult::OldVersion);
}

fs::call::VolumeRequest rename_request() {
  fs::call::VolumeRequest req;
  req.volume_id = 3;
  req.ctx.cred = {1000, 100, {4, 24, 27}};
  req.args = fs::call::RenameArgs{{17, 3}, "old name", {18, 1}, "new"};
  return req;
}

std::vector<uint8_t> joined(const CallRecordPieces& p) {
  std::vector<uint8_t> out(p.prefix.data());
  out.insert(out.end(), p.data.begin(), p.data.end());
  out.insert(out.end(), p.suffix.data().begin(), p.suffix.data().end());
  return out;
}

TEST(CallRecord, IsTheEncodedCallAndItsReply) {
  fs::call::VolumeRequest req;
  req.volume_id = 3;
  req.ctx.cred = {0, 0, {}};
  fs::SetAttr sa;
  sa.mode = 0640;
  req.args = fs::call::MknodArgs{{1, 0}, "dev", fs::FileType::Chr, sa, 8, 1};
  fs::call::VolumeReply reply;
  reply.op = fs::call::VolumeOp::Mknod;
  reply.status = fs::Status::Ok;
  fs::call::CreatedResult made;
  made.id = {99, 7};
  reply.result = made;
  CallRecordPieces pieces;
  pieces.set_request(req);
  pieces.set_reply(reply);
  std::vector<uint8_t> payload = joined(pieces);
  // The request part is byte for byte what an interconnect frame carries.
  std::vector<uint8_t> wire = fs::call::encode_request(req);
  ASSERT_LE(wire.size(), payload.size());
  EXPECT_TRUE(std::equal(wire.begin(), wire.end(), payload.begin()));
  CallRecord back;
  std::string err;
  ASSERT_TRUE(decode_call_record(payload, &back, &err)) << err;
  EXPECT_EQ(back.request.op(), fs::call::VolumeOp::Mknod);
  const auto& a = std::get<fs::call::MknodArgs>(back.request.args);
  EXPECT_EQ(a.name, "dev");
  EXPECT_EQ(a.rdev_major, 8u);
  EXPECT_EQ(a.sa.mode, std::optional<uint32_t>(0640));
  ASSERT_TRUE(back.created().has_value());
  EXPECT_EQ(*back.created(), (fs::InodeId{99, 7}));
}

TEST(CallRecord, WriteDataIsAPieceOfItsOwnAndReadsBackInPlace) {
  auto data = testing::pattern(9, 4096);
  fs::call::VolumeRequest req;
  req.volume_id = 1;
  req.args = fs::call::WriteArgs{{5, 1}, 1 << 20, data, fs::Stability::Unstable};
  fs::call::VolumeReply reply;
  reply.op = fs::call::VolumeOp::Write;
  reply.status = fs::Status::Ok;
  reply.result = fs::call::WriteResult{};
  CallRecordPieces pieces;
  pieces.set_request(req);
  pieces.set_reply(reply);
  EXPECT_EQ(pieces.data.data(), data.data());  // a view of the caller's buffer, not a copy
  std::vector<uint8_t> payload = joined(pieces);
  EXPECT_EQ(std::vector<uint8_t>(payload.begin(), payload.end() - pieces.suffix.size()),
            fs::call::encode_request(req));
  CallRecord back;
  std::string err;
  ASSERT_TRUE(decode_call_record(payload, &back, &err)) << err;
  const auto& w = std::get<fs::call::WriteArgs>(back.request.args);
  EXPECT_EQ(w.offset, 1u << 20);
  ASSERT_EQ(w.data.size(), data.size());
  EXPECT_TRUE(std::equal(data.begin(), data.end(), w.data.begin()));
  EXPECT_FALSE(back.created().has_value());
}

TEST(CallRecord, GarbageReadsAndFailuresAreRejectedNotTrusted) {
  fs::call::VolumeReply reply;
  reply.op = fs::call::VolumeOp::Rename;
  reply.status = fs::Status::Ok;
  reply.result = fs::call::RenameResult{};
  CallRecordPieces pieces;
  pieces.set_request(rename_request());
  pieces.set_reply(reply);
  std::vector<uint8_t> good = joined(pieces);
  CallRecord out;
  std::string err;
  ASSERT_TRUE(decode_call_record(good, &out, &err)) << err;
  for (size_t cut = 0; cut < good.size(); ++cut) {
    std::vector<uint8_t> shorter(good.begin(), good.begin() + static_cast<long>(cut));
    EXPECT_FALSE(decode_call_record(shorter, &out, &err)) << "cut " << cut;
  }
  good.push_back(0);
  EXPECT_FALSE(decode_call_record(good, &out, &err));
  // A read is never journalled, and neither is a failed call.
  fs::call::VolumeRequest read;
  read.args = fs::call::ReadArgs{{5, 1}, 0, 10};
  pieces.set_request(read);
  fs::call::VolumeReply read_reply;
  read_reply.op = fs::call::VolumeOp::Read;
  read_reply.status = fs::Status::Ok;
  read_reply.result = fs::call::ReadResult{};
  pieces.set_reply(read_reply);
  EXPECT_FALSE(decode_call_record(joined(pieces), &out, &err));
  EXPECT_NE(err.find("READ"), std::string::npos) << err;
  pieces.set_request(rename_request());
  reply.status = fs::Status::NoEnt;
  pieces.set_reply(reply);
  EXPECT_FALSE(decode_call_record(joined(pieces), &out, &err));
  std::mt19937 rng(11);
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> junk(rng() % 300);
    for (auto& b : junk) b = static_cast<uint8_t>(rng());
    if (!junk.empty()) junk[0] = fs::call::kVolumeCodecVersion;
    decode_call_record(junk, &out, &err);  // must not crash or over-read
    fuzz_journal_record(junk.data(), junk.size());
  }
}

}  // namespace
}  // namespace nasd::nvram
