// fs::call::try_execute_volume_call on an LFS volume: what the interconnect's reader thread
// runs for a forwarded call before handing it to the pool (cluster/interconnect/volume_server.h).
// Every read has an attempt; once the volume has what it needs in memory, the attempt's encoded
// reply is byte for byte the pool's (execute_volume_call); before that, and for every name-space
// mutation, it declines having done nothing. (WRITE and COMMIT have attempts too: see
// tests/cluster/forwarded_commit_park_test.cc.)
#include "fs/call/codec.h"
#include "fs/call/dispatch.h"
#include "tests/fs/test_volume.h"

namespace nasd::fs::lfs::testing {
namespace {

using namespace fs::call;

VolumeRequest request_of(uint32_t volume_id, CallArgs args) {
  VolumeRequest req;
  req.volume_id = volume_id;
  req.ctx = root_ctx();
  req.args = std::move(args);
  return req;
}

TEST(AttemptedVolumeCalls, EveryReadIsAnsweredInPlaceFromMemoryAsThePoolWouldAnswerIt) {
  ScratchDir dir;
  LfsOptions opts = small_options(dir.path());
  InodeId d, f, link;
  {
    auto vol = make_volume(opts);
    d = make_dir(*vol, vol->root(), "d");
    for (int i = 0; i < 20; i++) create_file(*vol, d, "e" + std::to_string(i));
    f = create_file(*vol, d, "f");
    ASSERT_EQ(write_at(*vol, f, 0, pattern(10000, 3)), Status::Ok);
    std::optional<Attr> obj;
    Wcc wcc;
    ASSERT_EQ(vol->symlink(root_ctx(), d, "l", "f", SetAttr{}, &link, &obj, &wcc), Status::Ok);
    ASSERT_EQ(vol->close(), Status::Ok);
  }
  auto vol = reopen(opts);  // cold
  ASSERT_TRUE(vol);
  const std::vector<CallArgs> reads = {
      GetattrArgs{f},
      LookupArgs{d, "e3"},
      AccessArgs{f, 0x3f},
      ReadArgs{f, 4096, 4096},
      ReadlinkArgs{link},
      ReaddirArgs{d, 0, 0, 8, false},
      ReaddirArgs{d, 0, 0, 100, true},
      FsstatArgs{d},
  };
  for (const CallArgs& args : reads) {
    const VolumeRequest req = request_of(vol->id(), args);
    EXPECT_FALSE(try_execute_volume_call(*vol, req))
        << "op " << int(req.op()) << " answered from a cold cache";
  }
  for (const CallArgs& args : reads) {
    const VolumeRequest req = request_of(vol->id(), args);
    const std::vector<uint8_t> pooled = encode_reply(execute_volume_call(*vol, req));
    std::optional<VolumeReply> tried = try_execute_volume_call(*vol, req);
    ASSERT_TRUE(tried) << "op " << int(req.op()) << " not answered once in memory";
    EXPECT_TRUE(has_attempt(req.op())) << "op " << int(req.op()) << " skipped by the owner";
    EXPECT_EQ(tried->status, Status::Ok) << "op " << int(req.op());
    EXPECT_EQ(encode_reply(*tried), pooled) << "op " << int(req.op());
  }
  // A name-space mutation has no attempt on the owner: it is journalled where waiting is fine.
  const VolumeRequest remove = request_of(vol->id(), RemoveArgs{d, "e1"});
  EXPECT_FALSE(try_execute_volume_call(*vol, remove));
  EXPECT_FALSE(has_attempt(remove.op()));
  InodeId still;
  EXPECT_EQ(lookup(*vol, d, "e1", &still), Status::Ok) << "a declined attempt changed the volume";
  vol->close();
}

}  // namespace
}  // namespace nasd::fs::lfs::testing
