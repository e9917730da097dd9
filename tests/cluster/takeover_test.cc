// The takeover path of an HA pair without processes: node a's journal mirrors to b's
// PartnerMirror; a "crashes" (nothing closed, nothing flushed); b opens a's volume from the
// shared folder with a copy of the mirror and finds every acknowledged operation.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cluster/hosted_volumes.h"
#include "cluster/partner_mirror.h"
#include "tests/cluster/recorded_replies.h"
#include "tests/cluster/scratch_dir.h"
#include "nvram/journal.h"
#include "nvram/reply_window.h"
#include "util/config.h"
#include "util/log.h"

namespace nasd::cluster {
namespace {

using Scratch = testing::ScratchDir;
using testing::RecordedReplies;
using testing::create_as_client;
using testing::exists_in_root;

std::vector<uint8_t> pattern(uint32_t seed, size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed * 131 + i * 7);
  return v;
}

fs::OpContext root_ctx() {
  fs::OpContext ctx;
  ctx.cred.uid = 0;
  ctx.cred.gid = 0;
  return ctx;
}

// The pair's cluster key; b keeps the copy of a's NVRAM.
const std::vector<uint8_t> kKey(32, 0x5a);
nvram::MirrorServerOptions mirror_options() {
  nvram::MirrorServerOptions o;
  o.credentials = {kKey, "b"};
  o.primary = "a";
  return o;
}

const Config kConfig = Config::parse("[volume v0]\nid = 7\nsize = 64M\nsegment_size = 1M\n");

// What HostedVolumes tells the operator (room "cluster") while it lives.
struct Logged : util::LogCapture {
  Logged() : util::LogCapture("cluster") {}
};

// What a takeover test starts from: its folder, the pair's shared disk in it ("san"), where
// the takeover's copy of a's NVRAM goes, the volume's config and a root credential.
struct TakeoverScene {
  Scratch dir;
  std::string shared = dir.path + "/san";
  std::string copy = dir.path + "/takeover.img";
  const ConfigSection& section = *kConfig.section("volume", "v0");
  fs::OpContext ctx = root_ctx();
  TakeoverScene() { std::filesystem::create_directories(shared); }
};

// Where node a's NVRAM journal (16 MiB) lives in the test's folder.
nvram::JournalOptions node_a_journal_options(const Scratch& dir) {
  nvram::JournalOptions jo;
  jo.path = dir.path + "/a-nvram.img";
  jo.size = 16 << 20;
  return jo;
}

// Node a's own NVRAM journal, unmirrored.
std::shared_ptr<nvram::Journal> node_a_journal(const Scratch& dir) {
  return nvram::Journal::open(node_a_journal_options(dir));
}

// Node a's NVRAM journal mirrored to `mirror` (b's copy), once the mirror is connected; null
// when it never connected. Acknowledged means in the mirror too (MirrorPolicy::Fail).
std::shared_ptr<nvram::Journal> node_a_mirrored_journal(const Scratch& dir, const PartnerMirror& mirror) {
  nvram::JournalOptions jo = node_a_journal_options(dir);
  jo.mirror = "127.0.0.1:" + std::to_string(mirror.port());
  jo.mirror_credentials = {kKey, "a"};
  jo.mirror_peer = "b";
  jo.mirror_policy = nvram::MirrorPolicy::Fail;
  auto journal = nvram::Journal::open(jo);
  for (int i = 0; i < 200 && !journal->accepts_mutations(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return journal->accepts_mutations() ? journal : nullptr;
}

// Whether the mirror serves its partner again (it holds records), waiting at most 5 s: after a
// takeover copy it resumes only once no copy came for PartnerMirror::kResumeAfter.
bool mirror_serves_again(const PartnerMirror& mirror) {
  for (int i = 0; i < 100 && mirror.status().find("holds records") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return mirror.status().find("holds records") != std::string::npos;
}

TEST(Takeover, EveryAcknowledgedOperationOfTheDeadPartnerIsReplayedFromTheMirrorCopy) {
  Scratch dir;
  const std::string shared = dir.path + "/san";
  std::filesystem::create_directories(shared);
  PartnerMirror mirror(dir.path + "/b-partner-nvram.img", nvram::DurabilityMode::Process,
                       "127.0.0.1", 0, mirror_options());
  mirror.start();

  constexpr int kFiles = 40;
  {
    auto journal = node_a_mirrored_journal(dir, mirror);
    ASSERT_TRUE(journal) << "the mirror never connected";
    HostedVolumes a(journal);
    std::shared_ptr<fs::Volume> v = a.open(*kConfig.section("volume", "v0"), kConfig, shared);
    fs::OpContext ctx = root_ctx();
    for (int i = 0; i < kFiles; ++i) {
      fs::InodeId f;
      std::optional<fs::Attr> attr;
      fs::Wcc wcc;
      ASSERT_EQ(v->create(ctx, v->root(), "f" + std::to_string(i), fs::CreateMode::Guarded, {}, 0,
                          &f, &attr, &wcc),
                fs::Status::Ok);
      fs::Stability got;
      auto data = pattern(i, 6000);
      ASSERT_EQ(v->write(ctx, f, 0, data, fs::Stability::FileSync, &got, &wcc), fs::Status::Ok);
    }
    // a dies here: HostedVolumes abandons (writes nothing), the journal is dropped unflushed.
  }

  const std::string copy = dir.path + "/takeover.img";
  std::string error;
  ASSERT_EQ(mirror.copy_to(copy, &error), PartnerMirror::Copy::Copied) << error;
  Logged b_log;
  HostedVolumes b(nullptr);
  std::shared_ptr<fs::Volume> v = b.open(*kConfig.section("volume", "v0"), kConfig, shared, copy);
  EXPECT_TRUE(b_log.has("partner's NVRAM")) << "no replay was reported";
  EXPECT_FALSE(b_log.has("replayed 0 of")) << "nothing needed replaying: the test proves nothing";
  fs::OpContext ctx = root_ctx();
  for (int i = 0; i < kFiles; ++i) {
    fs::InodeId f;
    std::optional<fs::Attr> oa, da;
    ASSERT_EQ(v->lookup(ctx, v->root(), "f" + std::to_string(i), &f, &oa, &da), fs::Status::Ok)
        << "f" << i << " was acknowledged but is missing";
    std::vector<uint8_t> data;
    bool eof = false;
    ASSERT_EQ(v->read(ctx, f, 0, 8192, &data, &eof, &oa), fs::Status::Ok);
    EXPECT_EQ(data, pattern(i, 6000)) << "f" << i;
  }
  b.close(7, true);
  // The mirror serves its partner again once no copy came for a moment.
  EXPECT_TRUE(mirror_serves_again(mirror)) << mirror.status();
}

// A takeover copies the mirror once per volume of the partner, one after the other: the link
// stays paused between the copies instead of being restarted (which maps and scans the whole
// region) after each one, and comes back once they stopped.
TEST(Takeover, TheMirrorStaysPausedBetweenTheCopiesOfOneTakeoverAndResumesAfter) {
  Scratch dir;
  PartnerMirror mirror(dir.path + "/b-partner-nvram.img", nvram::DurabilityMode::Process,
                       "127.0.0.1", 0, mirror_options());
  mirror.start();
  ASSERT_TRUE(node_a_mirrored_journal(dir, mirror)) << "the mirror never connected";
  util::LogCapture nvram_log("nvram");
  std::string error;
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(mirror.copy_to(dir.path + "/copy-" + std::to_string(i) + ".img", &error),
              PartnerMirror::Copy::Copied) << error;
    EXPECT_NE(mirror.status().find("paused for a takeover copy"), std::string::npos) << mirror.status();
  }
  // Each start of the mirror logs what its region holds: none between the copies.
  EXPECT_FALSE(nvram_log.has("mirror region")) << "the mirror restarted between the copies";
  EXPECT_TRUE(mirror_serves_again(mirror)) << mirror.status();
  EXPECT_TRUE(nvram_log.has("mirror region"));
  mirror.stop();
  EXPECT_NE(mirror.status().find("stopped"), std::string::npos) << mirror.status();
}

// Node a's NVRAM may hold records its partner's copy lacks: in flight when a died, so never
// acknowledged. They stay in a's NVRAM, which a replays when it opens the volume again after
// the failback. By then b's clients have written over the same bytes and were told it is
// stable: a's stale records must not replay over that.
TEST(Takeover, RecordsTheMirrorCopyLacksNeverReplayOverTheNewOwnersWrites) {
  TakeoverScene scene;
  auto write = [&](fs::Volume& v, fs::InodeId f, uint32_t seed) {
    fs::Wcc wcc;
    fs::Stability got;
    return v.write(scene.ctx, f, 0, pattern(seed, 6000), fs::Stability::FileSync, &got, &wcc);
  };
  fs::InodeId f;
  {
    auto journal = node_a_journal(scene.dir);
    HostedVolumes a(journal);
    std::shared_ptr<fs::Volume> v = a.open(scene.section, kConfig, scene.shared);
    std::optional<fs::Attr> attr;
    fs::Wcc wcc;
    ASSERT_EQ(
        v->create(scene.ctx, v->root(), "f", fs::CreateMode::Guarded, {}, 0, &f, &attr, &wcc),
        fs::Status::Ok);
    ASSERT_EQ(write(*v, f, 1), fs::Status::Ok);
    // What the mirror held when a died (a copy of a's region, which is all the mirror is).
    std::filesystem::copy_file(scene.dir.path + "/a-nvram.img", scene.copy);
    // In flight when a died: in a's NVRAM, not in the mirror, never acknowledged.
    for (uint32_t i = 0; i < 20; ++i) ASSERT_EQ(write(*v, f, 100 + i), fs::Status::Ok);
    // a dies here: the volume is abandoned, the journal dropped unflushed.
  }
  {
    HostedVolumes b(nullptr);
    std::shared_ptr<fs::Volume> v = b.open(scene.section, kConfig, scene.shared, scene.copy);
    ASSERT_EQ(write(*v, f, 2), fs::Status::Ok) << "b's client is told this write is stable";
    ASSERT_TRUE(b.close(7, true));  // the failback
  }
  Logged a_log;
  auto journal = node_a_journal(scene.dir);
  HostedVolumes a(journal);
  std::shared_ptr<fs::Volume> v = a.open(scene.section, kConfig, scene.shared);
  EXPECT_TRUE(a_log.has("already on disk")) << "a's own records were not even looked at";
  std::vector<uint8_t> data;
  bool eof = false;
  std::optional<fs::Attr> attr;
  ASSERT_EQ(v->read(scene.ctx, f, 0, 6000, &data, &eof, &attr), fs::Status::Ok);
  EXPECT_EQ(data, pattern(2, 6000)) << "a stale record of the dead owner replayed over b's write";
  a.close(7, true);
}

// The loss e2e.fault_drill once found. A CREATE was in flight on a when a was paused: in a's
// NVRAM, not in the mirror, so never acknowledged (its reply was JUKEBOX once a ran again: its
// lease had lapsed). b took the volume over from the copy without it, and failed it back. When
// a opened the volume again from its own NVRAM, the record's seq was below the durable one
// (b's), so it was skipped as "already on disk" -- but its reply went to the reply cache, and
// the client's retransmission was answered OK for a file that exists nowhere.
TEST(Takeover, ARecordTheMirrorCopyLacksGivesNoReplyAfterTheFailback) {
  TakeoverScene scene;
  {
    HostedVolumes a(node_a_journal(scene.dir), std::make_shared<RecordedReplies>());
    std::shared_ptr<fs::Volume> v = a.open(scene.section, kConfig, scene.shared);
    ASSERT_EQ(create_as_client(*v, "kept", 1), fs::Status::Ok);
    // What the mirror held.
    std::filesystem::copy_file(scene.dir.path + "/a-nvram.img", scene.copy);
    ASSERT_EQ(create_as_client(*v, "ghost", 2), fs::Status::Ok) << "(in flight: in a's NVRAM only)";
    // a stops here; its lease lapses and the volume is abandoned, unflushed.
  }
  {
    nvram::JournalOptions jo;
    jo.path = scene.dir.path + "/b-nvram.img";
    jo.size = 16 << 20;
    HostedVolumes b(nvram::Journal::open(jo), std::make_shared<RecordedReplies>());
    std::shared_ptr<fs::Volume> v = b.open(scene.section, kConfig, scene.shared, scene.copy);
    ASSERT_TRUE(exists_in_root(*v, "kept"));
    ASSERT_FALSE(exists_in_root(*v, "ghost")) << "the copy lacks it: the test proves nothing";
    ASSERT_EQ(create_as_client(*v, "made-on-b", 3), fs::Status::Ok);
    ASSERT_TRUE(b.close(7, true));  // the failback
  }
  auto replies = std::make_shared<RecordedReplies>();
  HostedVolumes a(node_a_journal(scene.dir), replies);
  std::shared_ptr<fs::Volume> v = a.open(scene.section, kConfig, scene.shared);
  EXPECT_FALSE(replies->has(2)) << "the reply of a call no file system has went to the cache";
  EXPECT_TRUE(replies->has(1)) << "an acknowledged call's reply is lost (b carried it back)";
  EXPECT_TRUE(replies->has(3)) << "b's own call's reply is lost";
  // The client's retransmission runs, and then the file is there.
  ASSERT_EQ(create_as_client(*v, "ghost", 2), fs::Status::Ok);
  EXPECT_TRUE(exists_in_root(*v, "ghost")) << "the retransmission was answered OK from a record no "
                                      "file system holds: the acknowledged CREATE is lost";
  EXPECT_TRUE(exists_in_root(*v, "kept"));
  EXPECT_TRUE(exists_in_root(*v, "made-on-b"));
  a.close(7, true);
}

// The reply window a node saves beside the volume (for the next opener) is saved only while
// the node holds the volume's lease: past it the next owner may have opened the volume and be
// saving its own window into the same file, which an older one must not overwrite.
TEST(Takeover, ANodeWhoseLeaseLapsedSavesNoReplyWindow) {
  Scratch dir;
  const std::string shared = dir.path + "/san";
  std::filesystem::create_directories(shared);
  auto saved = [&] {
    std::vector<std::vector<uint8_t>> window;
    std::string error;
    EXPECT_TRUE(nvram::load_reply_window(shared + "/v0.replies", &window, &error)) << error;
    return window.size();
  };
  auto lease = std::make_shared<std::atomic<bool>>(true);
  auto journal = node_a_journal(dir);
  HostedVolumes a(journal);
  std::shared_ptr<fs::Volume> v = a.open(*kConfig.section("volume", "v0"), kConfig, shared,
                                         "", nullptr, [lease] { return lease->load(); });
  ASSERT_EQ(create_as_client(*v, "first", 1), fs::Status::Ok);
  journal->flush_targets_and_trim();
  ASSERT_EQ(saved(), 1u) << "the window is not saved at a trim: the test proves nothing";
  ASSERT_EQ(create_as_client(*v, "second", 2), fs::Status::Ok);
  lease->store(false);  // before the next trim: the partner may be the owner by now
  journal->flush_targets_and_trim();
  EXPECT_EQ(saved(), 1u) << "a node without the lease wrote the volume's reply window";
  a.close(7, false);
}

// A failback or planned failover closes the volume while clients' mutations are running. Each
// must end either acknowledged and in the file system the next owner opens, or refused with
// JUKEBOX (which clients retry), never NFS3ERR_IO.
TEST(Takeover, CleanHandOverUnderLoadKeepsEveryAcknowledgedMutation) {
  Scratch dir;
  const std::string shared = dir.path + "/san";
  std::filesystem::create_directories(shared);
  std::vector<std::vector<std::string>> acked(3);
  std::vector<std::vector<fs::Status>> refused(3);
  {
    HostedVolumes a(node_a_journal(dir));
    std::shared_ptr<fs::Volume> v = a.open(*kConfig.section("volume", "v0"), kConfig, shared);
    std::vector<std::thread> clients;
    std::atomic<int> started{0};
    for (int t = 0; t < 3; ++t) {
      clients.emplace_back([&, t] {
        fs::OpContext ctx = root_ctx();
        for (int i = 0; i < 100000; ++i) {
          const std::string name = "t" + std::to_string(t) + "-" + std::to_string(i);
          fs::InodeId f;
          std::optional<fs::Attr> attr;
          fs::Wcc wcc;
          fs::Status st =
              v->create(ctx, v->root(), name, fs::CreateMode::Guarded, {}, 0, &f, &attr, &wcc);
          if (i == 50) started++;
          if (st != fs::Status::Ok) {
            refused[t].push_back(st);
            if (refused[t].size() >= 20) return;  // the volume is gone; a client would retry
            continue;
          }
          acked[t].push_back(name);
        }
      });
    }
    for (int i = 0; i < 500 && started < 3; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    a.close(7, true);
    for (auto& c : clients) c.join();
  }
  Logged b_log;
  HostedVolumes b(nullptr);
  std::shared_ptr<fs::Volume> v = b.open(*kConfig.section("volume", "v0"), kConfig, shared);
  fs::OpContext ctx = root_ctx();
  size_t total = 0;
  for (int t = 0; t < 3; ++t) {
    EXPECT_FALSE(refused[t].empty()) << "client " << t << " finished before the close";
    for (fs::Status st : refused[t]) EXPECT_EQ(st, fs::Status::Jukebox) << fs::status_name(st);
    for (const std::string& name : acked[t]) {
      fs::InodeId f;
      std::optional<fs::Attr> oa, da;
      ASSERT_EQ(v->lookup(ctx, v->root(), name, &f, &oa, &da), fs::Status::Ok)
          << name << " was acknowledged before the hand-over but is missing";
    }
    total += acked[t].size();
  }
  EXPECT_GE(total, 150u);
  b.close(7, true);
}

// A call routed to the volume just before its hand-over (or a failover) may run after the
// close: it must be asked again (Jukebox: the router then sends it to the new owner), never
// fail with Io, which an NFS client hands to the application as EIO. e2e.planned_moves saw
// NFS3ERR_IO for LOOKUPs forwarded to the old owner of an EVS that moved back.
TEST(Takeover, CallsThatReachAVolumeAfterItsHandOverAreAskedAgainNotFailed) {
  Scratch dir;
  const std::string shared = dir.path + "/san";
  std::filesystem::create_directories(shared);
  HostedVolumes a(node_a_journal(dir));
  std::shared_ptr<fs::Volume> v = a.open(*kConfig.section("volume", "v0"), kConfig, shared);
  fs::OpContext ctx = root_ctx();
  fs::InodeId f;
  std::optional<fs::Attr> oa, da;
  fs::Wcc wcc;
  ASSERT_EQ(v->create(ctx, v->root(), "kept", fs::CreateMode::Guarded, {}, 0, &f, &oa, &wcc),
            fs::Status::Ok);
  a.close(7, true);
  fs::InodeId found;
  EXPECT_EQ(v->lookup(ctx, v->root(), "kept", &found, &oa, &da), fs::Status::Jukebox);
  fs::Attr attr;
  EXPECT_EQ(v->getattr(ctx, f, &attr), fs::Status::Jukebox);
  std::vector<uint8_t> data;
  bool eof = false;
  EXPECT_EQ(v->read(ctx, f, 0, 4096, &data, &eof, &oa), fs::Status::Jukebox);
  const std::vector<uint8_t> bytes = pattern(1, 100);
  fs::Stability committed;
  EXPECT_EQ(v->write(ctx, f, 0, bytes, fs::Stability::FileSync, &committed, &wcc),
            fs::Status::Jukebox);
}

}  // namespace
}  // namespace nasd::cluster
