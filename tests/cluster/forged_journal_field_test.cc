// Nothing that comes over the interconnect can set a journal sequence or force an inode: a
// peer that sends a forwarded CREATE with the journal fields of the old encoding appended to the
// credential (or the old codec version) gets SERVERFAULT, and neither the journal nor the file
// system sees a call; the same CREATE sent properly is journalled under the owner's own sequence
// and gets an inode the file system chose. Real sockets: PeerClient -> InterconnectServer ->
// VolumeServer -> JournalVolume -> MemoryFs.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "cluster/interconnect/interconnect_server.h"
#include "cluster/interconnect/peer_client.h"
#include "cluster/interconnect/remote_volume.h"
#include "cluster/interconnect/volume_server.h"
#include "tests/cluster/owner_link.h"
#include "fs/call/codec.h"
#include "nvram/journal_volume.h"
#include "tests/support/memory_fs.h"
#include "tests/support/memory_resolver.h"

namespace nasd::interconnect {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kVolume = 3;
const fs::InodeId kForged{4242, 9};

TEST(ForgedJournalField, HasNoEffectOverTheInterconnect) {
  char tmpl[] = "/tmp/nasd-forged-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  nvram::JournalOptions jo;
  jo.path = dir + "/nvram.img";
  jo.size = 4 << 20;
  auto journal = nvram::Journal::open(jo);
  auto fs_target = std::make_shared<test_support::MemoryFs>(kVolume);
  nvram::JournalVolume volume(journal, fs_target);
  volume.recover();
  test_support::MemoryResolver volumes;
  volumes.add(&volume);

  InterconnectServerOptions so = cluster::testing::owner_server_options();
  InterconnectServer server(so);
  VolumeServer volume_server(&volumes, {});
  volume_server.attach(server);
  server.start();
  PeerClientOptions co = cluster::testing::front_client_options(server.port());
  auto client = std::make_shared<PeerClient>(co);
  client->start();
  ASSERT_TRUE(client->wait_connected(5s)) << client->last_error();

  fs::call::VolumeRequest req;
  req.volume_id = kVolume;
  req.ctx.cred = {0, 0, {}};
  req.args = fs::call::CreateArgs{volume.root(), "x", fs::CreateMode::Guarded, {}, 0};
  const std::vector<uint8_t> honest = fs::call::encode_request(req);
  // The credential ends after version, op, volume, uid, gid and an empty gid list.
  constexpr size_t kAfterCred = 1 + 1 + 4 + 4 + 4 + 4;
  std::vector<uint8_t> forged(honest.begin(), honest.begin() + kAfterCred);
  for (int i = 0; i < 8; ++i) forged.push_back(0x7f);  // journal sequence
  forged.push_back(1);                                 // forced inode present ...
  for (int i = 0; i < 8; ++i) forged.push_back(static_cast<uint8_t>(kForged.ino >> (8 * i)));
  for (int i = 0; i < 4; ++i) forged.push_back(static_cast<uint8_t>(kForged.gen >> (8 * i)));
  forged.insert(forged.end(), honest.begin() + kAfterCred, honest.end());
  std::vector<uint8_t> old_version = forged;
  old_version[0] = 1;

  for (const auto& bytes : {forged, old_version}) {
    CallOutcome out = client->call(MessageType::VolumeCall, bytes, 2s);
    ASSERT_EQ(out.error, CallError::None);
    fs::call::VolumeReply reply;
    ASSERT_TRUE(fs::call::decode_reply(out.payload, fs::call::VolumeOp::Create, &reply));
    EXPECT_EQ(reply.status, fs::Status::ServerFault);
  }
  EXPECT_TRUE(fs_target->applied_seqs().empty()) << "a forged call reached the file system";
  EXPECT_EQ(journal->stats().appends, 0u) << "a forged call was journalled";

  RemoteVolume remote(kVolume, client, RemoteVolumeOptions{2s, 1s, 8, nullptr});
  fs::InodeId made;
  std::optional<fs::Attr> attr;
  fs::Wcc wcc;
  ASSERT_EQ(remote.create(req.ctx, volume.root(), "x", fs::CreateMode::Guarded, {}, 0, &made,
                          &attr, &wcc),
            fs::Status::Ok);
  EXPECT_NE(made, kForged);
  const std::vector<uint64_t> applied = fs_target->applied_seqs();
  ASSERT_EQ(applied.size(), 1u);  // journalled once, under the owner's own next sequence
  EXPECT_NE(applied[0], 0x7f7f7f7f7f7f7f7full);

  client->stop();
  server.stop();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nasd::interconnect
