#include "fs/call/codec.h"

#include <gtest/gtest.h>

#include "tests/cluster/codec_samples.h"
#include "tests/cluster/fs_equality.h"

namespace nasd::interconnect {

using namespace fs::call;
namespace {

using cluster::testing::sample_context;
using cluster::testing::sample_requests;
using cluster::testing::sample_setattr;

VolumeRequest round_trip(const VolumeRequest& req, std::vector<uint8_t>* storage) {
  *storage = encode_request(req);
  VolumeRequest out;
  std::string error;
  EXPECT_TRUE(decode_request(*storage, &out, &error)) << error;
  return out;
}

TEST(VolumeCallCodec, EveryOpHasASampleAndDistinctNumber) {
  auto reqs = sample_requests();
  EXPECT_EQ(reqs.size(), std::variant_size_v<CallArgs>);
  for (size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(reqs[i].op()), i + 1) << volume_op_name(reqs[i].op());
  }
}

TEST(VolumeCallCodec, ContextSurvivesForEveryOp) {
  for (const auto& req : sample_requests()) {
    std::vector<uint8_t> buf;
    VolumeRequest got = round_trip(req, &buf);
    EXPECT_EQ(got.op(), req.op());
    EXPECT_EQ(got.volume_id, req.volume_id);
    EXPECT_TRUE(got.ctx == sample_context()) << volume_op_name(req.op());
    // Byte-identical re-encoding: nothing was lost or reordered.
    EXPECT_EQ(encode_request(got), buf) << volume_op_name(req.op());
  }
}

TEST(VolumeCallCodec, ArgumentsSurviveFieldByField) {
  std::vector<uint8_t> buf;
  auto reqs = sample_requests();
  auto setattr = std::get<SetattrArgs>(round_trip(reqs[1], &buf).args);
  EXPECT_EQ(setattr.id, (fs::InodeId{77, 3}));
  EXPECT_TRUE(setattr.sa == sample_setattr());
  EXPECT_EQ(setattr.guard_ctime, (fs::Time{12, 34}));

  auto write = std::get<WriteArgs>(round_trip(reqs[6], &buf).args);
  EXPECT_EQ(write.offset, 4096u);
  EXPECT_EQ(std::vector<uint8_t>(write.data.begin(), write.data.end()),
            (std::vector<uint8_t>{0, 1, 2, 0xff, 0x80, 42}));
  EXPECT_EQ(write.stable, fs::Stability::DataSync);

  auto create = std::get<CreateArgs>(round_trip(reqs[7], &buf).args);
  EXPECT_EQ(create.name, "new");
  EXPECT_EQ(create.mode, fs::CreateMode::Exclusive);
  EXPECT_EQ(create.verifier, 0xfeedfacecafebeefull);

  auto mknod = std::get<MknodArgs>(round_trip(reqs[10], &buf).args);
  EXPECT_EQ(mknod.type, fs::FileType::Chr);
  EXPECT_EQ(mknod.rdev_major, 8u);
  EXPECT_EQ(mknod.rdev_minor, 1u);

  auto rename = std::get<RenameArgs>(round_trip(reqs[13], &buf).args);
  EXPECT_EQ(rename.from_name, "from");
  EXPECT_EQ(rename.to_dir, (fs::InodeId{88, 4}));
  EXPECT_EQ(rename.to_name, "to");

  auto readdir = std::get<ReaddirArgs>(round_trip(reqs[15], &buf).args);
  EXPECT_EQ(readdir.cookie, 99u);
  EXPECT_EQ(readdir.cookieverf, 0xabcdefu);
  EXPECT_EQ(readdir.max_entries, 50u);
  EXPECT_TRUE(readdir.with_attrs);
}

TEST(VolumeCallCodec, DefaultCredential) {
  VolumeRequest req{1, fs::OpContext{}, GetattrArgs{{1, 1}}, std::nullopt};
  std::vector<uint8_t> buf;
  VolumeRequest got = round_trip(req, &buf);
  EXPECT_EQ(got.ctx.cred.uid, 65534u);
  EXPECT_TRUE(got.ctx.cred.gids.empty());
}

// The context on the wire is the credential and nothing after it: the bytes that followed it in
// codec version 1 (a journal sequence and a forced inode) make a request malformed now, and a
// version 1 request is refused outright.
TEST(VolumeCallCodec, NoJournalFieldsTravelWithACall) {
  VolumeRequest req{1, fs::OpContext{}, GetattrArgs{{1, 1}}, std::nullopt};
  req.ctx.cred = {0, 0, {}};
  std::vector<uint8_t> buf = encode_request(req);
  // version, op, volume id, uid, gid, gid count, call identity absent, then the argument
  // (ino, gen). The identity only names the client call; it cannot steer the journal.
  ASSERT_EQ(buf.size(), 1u + 1 + 4 + 4 + 4 + 4 + 1 + 8 + 4);
  std::vector<uint8_t> forged(buf.begin(), buf.begin() + 18);
  for (int i = 0; i < 8; ++i) forged.push_back(0x11);  // journal_seq
  forged.push_back(1);                                 // forced_inode present
  for (int i = 0; i < 12; ++i) forged.push_back(0x22);
  forged.insert(forged.end(), buf.begin() + 18, buf.end());
  VolumeRequest got;
  std::string error;
  EXPECT_FALSE(decode_request(forged, &got, &error));
  forged[0] = 1;
  EXPECT_FALSE(decode_request(forged, &got, &error));
  EXPECT_NE(error.find("version 1"), std::string::npos) << error;
}

fs::Attr some_attr(uint64_t n) {
  fs::Attr a;
  a.type = fs::FileType::Lnk;
  a.mode = 04755;
  a.nlink = 3;
  a.uid = 7;
  a.gid = 8;
  a.size = n;
  a.used = n * 2;
  a.rdev_major = 1;
  a.rdev_minor = 2;
  a.fsid = 0xf5;
  a.fileid = n + 1;
  a.atime = {1, 2};
  a.mtime = {-3, 4};
  a.ctime = {5, 999999999};
  return a;
}

TEST(VolumeCallCodec, ReaddirReplyRoundTripsEveryField) {
  ReaddirCallResult r;
  for (uint64_t i = 0; i < 5; ++i) {
    fs::DirEntry e{"e" + std::to_string(i), 100 + i, 200 + i, {300 + i, 1}, {}};
    if (i % 2) e.attr = some_attr(i);
    r.listing.entries.push_back(e);
  }
  r.listing.cookieverf = 0x77;
  r.listing.eof = true;
  r.listing.dir_attr = some_attr(9);
  VolumeReply reply{VolumeOp::Readdir, fs::Status::Ok, 0xabc, r};
  auto bytes = encode_reply(reply);
  VolumeReply got;
  std::string error;
  ASSERT_TRUE(decode_reply(bytes, VolumeOp::Readdir, &got, &error)) << error;
  EXPECT_EQ(got.status, fs::Status::Ok);
  EXPECT_EQ(got.write_verifier, 0xabcu);
  EXPECT_TRUE(std::get<ReaddirCallResult>(got.result).listing == r.listing);
}

TEST(VolumeCallCodec, ErrorReplyKeepsWccAndStatus) {
  WccResult r;
  r.wcc.before = fs::PreAttr{10, {1, 1}, {2, 2}};
  r.wcc.after = some_attr(10);
  VolumeReply reply{VolumeOp::Remove, fs::Status::NotEmpty, 1, r};
  VolumeReply got;
  ASSERT_TRUE(decode_reply(encode_reply(reply), VolumeOp::Remove, &got));
  EXPECT_EQ(got.status, fs::Status::NotEmpty);
  EXPECT_TRUE(std::get<WccResult>(got.result).wcc == r.wcc);
}

TEST(VolumeCallCodec, RefusalWithoutResult) {
  VolumeReply reply{VolumeOp::Write, fs::Status::Stale, 0, std::monostate{}};
  VolumeReply got;
  ASSERT_TRUE(decode_reply(encode_reply(reply), VolumeOp::Write, &got));
  EXPECT_EQ(got.status, fs::Status::Stale);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(got.result));
}

TEST(VolumeCallCodec, ReplyForAnotherOpIsRejected) {
  VolumeReply reply{VolumeOp::Getattr, fs::Status::Ok, 0, AttrResult{some_attr(1)}};
  VolumeReply got;
  std::string error;
  EXPECT_FALSE(decode_reply(encode_reply(reply), VolumeOp::Lookup, &got, &error));
  EXPECT_NE(error.find("GETATTR"), std::string::npos) << error;
}

TEST(VolumeCallCodec, EveryTruncationOfEveryRequestIsAnError) {
  for (const auto& req : sample_requests()) {
    std::vector<uint8_t> full = encode_request(req);
    for (size_t n = 0; n < full.size(); ++n) {
      std::vector<uint8_t> cut(full.begin(), full.begin() + n);
      VolumeRequest out;
      std::string error;
      EXPECT_FALSE(decode_request(cut, &out, &error)) << volume_op_name(req.op()) << " at " << n;
      EXPECT_FALSE(error.empty());
    }
    full.push_back(0);
    VolumeRequest out;
    EXPECT_FALSE(decode_request(full, &out)) << "trailing byte accepted";
  }
}

TEST(VolumeCallCodec, EveryTruncationOfAReplyIsAnError) {
  LookupResult r{{5, 6}, some_attr(1), std::nullopt};
  std::vector<uint8_t> full = encode_reply({VolumeOp::Lookup, fs::Status::Ok, 3, r});
  for (size_t n = 0; n < full.size(); ++n) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + n);
    VolumeReply out;
    EXPECT_FALSE(decode_reply(cut, VolumeOp::Lookup, &out)) << n;
  }
}

TEST(VolumeCallCodec, MalformedFieldsAreRejectedWithAReason) {
  auto reqs = sample_requests();
  std::string error;
  VolumeRequest out;

  std::vector<uint8_t> bad = encode_request(reqs[0]);
  bad[0] = 9;  // codec version
  EXPECT_FALSE(decode_request(bad, &out, &error));
  EXPECT_NE(error.find("version"), std::string::npos) << error;

  bad = encode_request(reqs[0]);
  bad[1] = 200;  // op
  EXPECT_FALSE(decode_request(bad, &out, &error));
  EXPECT_NE(error.find("unknown volume op"), std::string::npos) << error;

  // Supplementary group count sits after version, op, volume id, uid and gid.
  bad = encode_request(reqs[0]);
  bad[14] = 17;
  EXPECT_FALSE(decode_request(bad, &out, &error));
  EXPECT_NE(error.find("groups"), std::string::npos) << error;

  // MKNOD with an out-of-range file type.
  MknodArgs m = std::get<MknodArgs>(reqs[10].args);
  m.type = static_cast<fs::FileType>(99);
  bad = encode_request({1, fs::OpContext{}, m, std::nullopt});
  EXPECT_FALSE(decode_request(bad, &out, &error));
  EXPECT_NE(error.find("enum"), std::string::npos) << error;

  // A reply with an unknown status number.
  std::vector<uint8_t> reply = encode_reply({VolumeOp::Getattr, fs::Status::Ok, 0, {}});
  reply[2] = 0x77;
  reply[3] = 0x77;
  VolumeReply rout;
  EXPECT_FALSE(decode_reply(reply, VolumeOp::Getattr, &rout, &error));
}

TEST(VolumeCallCodec, HugeCountsAreRejectedWithoutAllocating) {
  // A READDIR reply claiming four billion entries in a few bytes.
  std::vector<uint8_t> reply = encode_reply(
      {VolumeOp::Readdir, fs::Status::Ok, 0, ReaddirCallResult{}});
  // The entry count is the first result field, right after the 15-byte header + flag.
  size_t count_at = 1 + 1 + 4 + 8 + 1;
  for (int i = 0; i < 4; ++i) reply[count_at + i] = 0xff;
  VolumeReply out;
  std::string error;
  EXPECT_FALSE(decode_reply(reply, VolumeOp::Readdir, &out, &error));
  EXPECT_NE(error.find("count"), std::string::npos) << error;
}

}  // namespace
}  // namespace nasd::interconnect
