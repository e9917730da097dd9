// The owner's side of a forwarded stable WRITE or COMMIT (issue 13): the call is applied and
// journalled on the link's reader, then parks on its NVRAM commit (util/resumable_call.h)
// instead of holding one of the owner's workers while the group commit and the partner's
// acknowledgement come in. The reply still leaves only once the record is mirrored (log before
// reply), each WRITE is applied and journalled once, and the workers stay free for everything
// else: a pool of ONE worker here serves other calls while many stable WRITEs wait.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "cluster/interconnect/interconnect_server.h"
#include "cluster/interconnect/peer_client.h"
#include "cluster/interconnect/remote_volume.h"
#include "cluster/interconnect/volume_server.h"
#include "tests/cluster/owner_link.h"
#include "nvram/journal.h"
#include "nvram/journal_volume.h"
#include "tests/cluster/echo_volume.h"
#include "tests/cluster/loopback_channel.h"
#include "tests/nvram/loop_test_doubles.h"
#include "tests/nvram/test_util.h"

namespace nasd::interconnect {
namespace {

using namespace std::chrono_literals;
using cluster::testing::EchoVolume;
using cluster::testing::MapResolver;
namespace nt = nvram::testing;

constexpr uint32_t kJournalled = 1, kEcho = 3;
constexpr int kWrites = 8;

bool wait_until(const std::function<bool()>& cond, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return cond();
}

TEST(ForwardedCommitPark, StableWritesAndCommitsWaitForTheMirrorWithoutHoldingAWorker) {
  nt::ScratchDir dir;
  nt::HeldAckJournal held = nt::open_held_ack_journal(dir.file("nv"));
  std::shared_ptr<nvram::Journal> journal = held.journal;
  nt::HeldAckMirror* mirror = held.mirror;
  auto fs = std::make_shared<nt::AttemptingMemoryFs>(kJournalled, nt::mem_target_options());
  nvram::JournalVolume volume(journal, fs);
  volume.recover();
  ASSERT_TRUE(journal->accepts_mutations());
  fs::OpContext ctx;
  fs::InodeId file;
  std::optional<fs::Attr> attr;
  fs::Wcc wcc;
  ASSERT_EQ(volume.create(ctx, volume.root(), "f", fs::CreateMode::Guarded, {}, 0, &file, &attr,
                          &wcc),
            fs::Status::Ok);

  // The owner, with a single worker: a stable WRITE waiting there would stop every other call
  // that needs the pool.
  EchoVolume echo(kEcho);
  MapResolver volumes;
  volumes.add(&volume);
  volumes.add(&echo);
  InterconnectServerOptions so = cluster::testing::owner_server_options();
  auto server = std::make_unique<InterconnectServer>(so);
  VolumeServerOptions vo;
  vo.threads = 1;
  auto volume_server = std::make_unique<VolumeServer>(&volumes, vo);
  volume_server->attach(*server);
  server->start();

  PeerClientOptions co = cluster::testing::front_client_options(server->port());
  auto client = std::make_shared<PeerClient>(co);
  client->start();
  ASSERT_TRUE(client->wait_connected(5s)) << client->last_error();
  RemoteVolume remote(kJournalled, client, RemoteVolumeOptions{10s, 1s, 64, nullptr});
  RemoteVolume remote_echo(kEcho, client, RemoteVolumeOptions{10s, 1s, 64, nullptr});

  // Stable WRITEs while the partner holds its acknowledgements.
  mirror->hold();
  const uint64_t appends0 = journal->stats().appends;
  std::atomic<int> answered{0}, ok{0};
  std::vector<std::thread> writers;
  for (int i = 0; i < kWrites; ++i) {
    writers.emplace_back([&, i] {
      fs::OpContext c;
      fs::Wcc w;
      fs::Stability committed = fs::Stability::Unstable;
      const fs::Status st = remote.write(c, file, uint64_t(i) * 4096, nt::pattern(i, 4096),
                                         fs::Stability::FileSync, &committed, &w);
      if (st == fs::Status::Ok && committed == fs::Stability::FileSync) ok.fetch_add(1);
      answered.fetch_add(1);
    });
  }
  ASSERT_TRUE(wait_until([&] { return volume_server->parked_calls() == kWrites; }, 10s))
      << "parked " << volume_server->parked_calls() << " of " << kWrites << " stable WRITEs";
  EXPECT_EQ(journal->stats().appends, appends0 + kWrites);

  // The one worker is free: a call that needs the pool is answered meanwhile.
  fs::InodeId made;
  std::optional<fs::Attr> made_attr;
  fs::Wcc made_wcc;
  EXPECT_EQ(remote_echo.create(ctx, echo.root(), "x", fs::CreateMode::Unchecked, {}, 0, &made,
                               &made_attr, &made_wcc),
            fs::Status::Ok);
  EXPECT_EQ(echo.calls(), 1u);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(answered.load(), 0) << "a stable WRITE was answered before the partner had it";

  mirror->release();
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(ok.load(), kWrites);
  EXPECT_EQ(journal->stats().appends, appends0 + kWrites) << "a resumed WRITE was journalled again";
  fs::Attr a;
  ASSERT_EQ(volume.getattr(ctx, file, &a), fs::Status::Ok);
  EXPECT_EQ(a.size, uint64_t(kWrites) * 4096);

  // UNSTABLE WRITE: applied from memory on the reader; its COMMIT parks until mirrored.
  mirror->hold();
  const uint64_t inline0 = volume_server->inline_calls();
  fs::Stability committed = fs::Stability::FileSync;
  ASSERT_EQ(remote.write(ctx, file, 0, nt::pattern(99, 4096), fs::Stability::Unstable,
                         &committed, &wcc),
            fs::Status::Ok);
  EXPECT_EQ(committed, fs::Stability::Unstable);
  EXPECT_EQ(volume_server->inline_calls(), inline0 + 1);
  std::atomic<bool> commit_answered{false};
  std::atomic<fs::Status> commit_status{fs::Status::Io};
  std::thread committer([&] {
    fs::OpContext c;
    fs::Wcc w;
    commit_status = remote.commit(c, file, 0, 0, &w);
    commit_answered = true;
  });
  ASSERT_TRUE(wait_until([&] { return volume_server->parked_calls() == kWrites + 1; }, 10s));
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(commit_answered.load()) << "COMMIT answered before the partner had the WRITE";
  mirror->release();
  committer.join();
  EXPECT_EQ(commit_status.load(), fs::Status::Ok);

  client->stop();
  server->stop();
}

}  // namespace
}  // namespace nasd::interconnect
