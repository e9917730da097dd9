// A forwarded call and the owner's journal back-pressure (issue 13/14, bug 2): the forwarder
// gives up on the owner after its call timeout and, for a call that may change state, resets
// the link so every other call in flight on it fails too; the owner's journal may wait far
// longer (space_wait) for NVRAM space. The owner must answer first: under a full journal it
// refuses a forwarded mutation JUKEBOX itself, unrun, well before the forwarder's deadline, so
// the link stays up and the other calls on it are not hurt (fs/call_deadline.h).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "cluster/interconnect/interconnect_server.h"
#include "cluster/interconnect/peer_client.h"
#include "cluster/interconnect/remote_volume.h"
#include "cluster/interconnect/volume_server.h"
#include "tests/cluster/owner_link.h"
#include "nvram/journal.h"
#include "nvram/journal_volume.h"
#include "nvram/region.h"
#include "tests/cluster/echo_volume.h"
#include "tests/cluster/loopback_channel.h"
#include "tests/nvram/test_util.h"

namespace nasd::interconnect {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using cluster::testing::EchoVolume;
using cluster::testing::MapResolver;
namespace nt = nvram::testing;

constexpr uint32_t kForwarded = 1, kFiller = 2, kEcho = 3;
constexpr auto kForwardTimeout = 1000ms;  // the forwarder's deadline
constexpr auto kAnswerWithin = 300ms;     // the owner's, clearly inside it

TEST(ForwardedSpaceWait, FullJournalAnswersJukeboxBeforeTheForwardersDeadlineAndKeepsTheLink) {
  nt::ScratchDir dir;
  // One journal of 64 KiB for two volumes; the filler's fs takes 3 s to flush, so once its
  // writes fill the log, the log stays full for longer than the forwarder waits -- and the
  // journal itself would wait for space far longer still.
  auto opts = nt::small_options(dir.file("nv"), nvram::kRegionHeaderSize + (64 << 10));
  opts.space_wait = 10s;
  auto journal = nvram::Journal::open(opts);
  auto forwarded_fs = std::make_shared<test_support::MemoryFs>(kForwarded, nt::mem_target_options());
  auto filler_fs = std::make_shared<test_support::MemoryFs>(kFiller, nt::mem_target_options());
  auto forwarded = std::make_unique<nvram::JournalVolume>(journal, forwarded_fs);
  auto filler = std::make_unique<nvram::JournalVolume>(journal, filler_fs);
  forwarded->recover();
  filler->recover();
  fs::OpContext ctx;
  fs::InodeId file, fill;
  std::optional<fs::Attr> attr;
  fs::Wcc wcc;
  ASSERT_EQ(forwarded->create(ctx, forwarded->root(), "f", fs::CreateMode::Guarded, {}, 0, &file,
                              &attr, &wcc),
            fs::Status::Ok);
  ASSERT_EQ(filler->create(ctx, filler->root(), "fill", fs::CreateMode::Guarded, {}, 0, &fill,
                           &attr, &wcc),
            fs::Status::Ok);
  filler_fs->set_flush_delay(3s);

  // The owner: both kinds of volume behind one interconnect server.
  EchoVolume echo(kEcho);
  echo.set_delay(800ms);
  MapResolver volumes;
  volumes.add(forwarded.get());
  volumes.add(&echo);
  InterconnectServerOptions so = cluster::testing::owner_server_options();
  auto server = std::make_unique<InterconnectServer>(so);
  VolumeServerOptions vo;
  vo.answer_within = kAnswerWithin;
  auto volume_server = std::make_unique<VolumeServer>(&volumes, vo);
  volume_server->attach(*server);
  server->start();

  // The forwarder.
  PeerClientOptions co = cluster::testing::front_client_options(server->port());
  co.backoff_initial = 10ms;
  co.backoff_max = 50ms;
  auto client = std::make_shared<PeerClient>(co);
  client->start();
  ASSERT_TRUE(client->wait_connected(5s)) << client->last_error();
  auto slots = std::make_shared<ForwardSlots>(8);
  RemoteVolume remote(kForwarded, client, RemoteVolumeOptions{kForwardTimeout, 1s, 8, slots});
  RemoteVolume remote_echo(kEcho, client, RemoteVolumeOptions{kForwardTimeout, 1s, 8, slots});
  const uint64_t connections = client->connections_made();

  // Fill the log from the owner's own client: its writes wait for space (back-pressure).
  std::thread filling([&] {
    fs::OpContext c;
    fs::Wcc w;
    fs::Stability committed;
    for (int b = 0; b < 24; ++b)
      EXPECT_EQ(filler->write(c, fill, uint64_t(b) * 4096, nt::pattern(b, 4096),
                              fs::Stability::Unstable, &committed, &w),
                fs::Status::Ok);
  });
  for (int i = 0; i < 500 && journal->stats().space_waits == 0; ++i)
    std::this_thread::sleep_for(10ms);
  ASSERT_GT(journal->stats().space_waits, 0u) << "the filler never filled the log";

  // A forwarded stable WRITE now, and another forwarded call that is in flight on the same
  // link when the forwarder's deadline for the WRITE passes.
  std::atomic<fs::Status> echo_status{fs::Status::Ok};
  std::thread other([&] {
    std::this_thread::sleep_for(500ms);
    fs::Stability committed;
    fs::Wcc w;
    echo_status = remote_echo.write(ctx, fs::InodeId{77, 3}, 0, nt::pattern(7, 512),
                                    fs::Stability::FileSync, &committed, &w);
  });
  const auto start = Clock::now();
  fs::Stability committed;
  const fs::Status st = remote.write(ctx, file, 0, nt::pattern(1, 4096), fs::Stability::FileSync,
                                     &committed, &wcc);
  const auto took = Clock::now() - start;
  other.join();

  EXPECT_EQ(st, fs::Status::Jukebox);
  EXPECT_LT(took, kForwardTimeout - 200ms) << "the owner did not answer before the deadline";
  EXPECT_EQ(echo_status.load(), fs::Status::Ok) << "a call in flight on the link was failed";
  EXPECT_EQ(client->timeout_aborts(), 0u) << "the forwarder reset the link";
  EXPECT_EQ(client->connections_made(), connections);
  // Refused unrun: the file is still empty, so the client's retry is safe.
  fs::Attr a;
  ASSERT_EQ(forwarded->getattr(ctx, file, &a), fs::Status::Ok);
  EXPECT_EQ(a.size, 0u);

  // Once the log drains, the same WRITE (the client's retry) goes through.
  filling.join();
  ASSERT_EQ(remote.write(ctx, file, 0, nt::pattern(1, 4096), fs::Stability::FileSync, &committed,
                         &wcc),
            fs::Status::Ok);
  ASSERT_EQ(forwarded->getattr(ctx, file, &a), fs::Status::Ok);
  EXPECT_EQ(a.size, 4096u);

  client->stop();
  server->stop();
}

}  // namespace
}  // namespace nasd::interconnect
