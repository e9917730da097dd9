// The scale-out volume (IfsVolume) over four in-process nodes: data striped as N+M groups over
// every node's drives, a checkpoint that a new coordinator opens, the NVRAM journal replayed
// on top, reads rebuilt from parity, re-protect back to full protection, and two lost drives.
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "cluster/scaleout/ifs_volume.h"
#include "nvram/journal.h"
#include "nvram/journal_options.h"
#include "nvram/journal_volume.h"
#include "tests/cluster/scaleout/local_ifs_cluster.h"

namespace nasd::scaleout {
namespace {

using fs::Status;

fs::OpContext root() {
  fs::OpContext c;
  c.cred.uid = 0;
  c.cred.gid = 0;
  return c;
}

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  std::mt19937 rng(seed);
  for (auto& b : v) b = uint8_t(rng());
  return v;
}

IfsOptions options() {
  IfsOptions o;
  o.name = "ifs";
  o.volume_id = 100;
  return o;
}

std::unique_ptr<IfsVolume> open_volume(IfsCluster* c) {
  std::string err;
  auto v = IfsVolume::open(options(), c, &err);
  EXPECT_TRUE(v) << err;
  return v;
}

fs::InodeId make_file(fs::Volume& v, const std::string& name) {
  fs::InodeId id;
  std::optional<fs::Attr> attr;
  fs::Wcc wcc;
  EXPECT_EQ(v.create(root(), v.root(), name, fs::CreateMode::Guarded, {}, 0, &id, &attr, &wcc), Status::Ok);
  return id;
}

void write_all(fs::Volume& v, fs::InodeId id, const std::vector<uint8_t>& data, size_t chunk = 65536) {
  for (size_t at = 0; at < data.size(); at += chunk) {
    size_t n = std::min(chunk, data.size() - at);
    fs::Stability committed;
    fs::Wcc wcc;
    ASSERT_EQ(v.write(root(), id, at, std::span(data.data() + at, n), fs::Stability::FileSync, &committed, &wcc), Status::Ok);
  }
}

std::vector<uint8_t> read_all(fs::Volume& v, const std::string& name) {
  fs::InodeId id;
  std::optional<fs::Attr> a, d;
  if (v.lookup(root(), v.root(), name, &id, &a, &d) != Status::Ok) return {};
  std::vector<uint8_t> out;
  for (int i = 0; i < 10000; i++) {
    std::vector<uint8_t> part;
    bool eof = false;
    std::optional<fs::Attr> attr;
    if (v.read(root(), id, out.size(), 1 << 20, &part, &eof, &attr) != Status::Ok) return {0xde, 0xad};
    out.insert(out.end(), part.begin(), part.end());
    if (eof) break;
  }
  return out;
}

struct Files {
  std::map<std::string, std::vector<uint8_t>> content;
  void make(fs::Volume& v) {
    content["big"] = pattern(5 * 1024 * 1024 + 12345, 1);      // several 6+2 groups
    content["small"] = pattern(3000, 2);                         // mirrored 3 ways
    content["unit"] = pattern(kStripeUnit, 3);
    content["odd"] = pattern(kSlotBytes + 77, 4);
    for (auto& [name, data] : content) write_all(v, make_file(v, name), data);
  }
  void expect_intact(fs::Volume& v, const std::string& when) {
    for (auto& [name, data] : content) EXPECT_TRUE(read_all(v, name) == data) << name << " " << when;
  }
};

TEST(IfsVolume, DataIsStripedOverEveryNodeAndANewCoordinatorReadsIt) {
  testing::LocalIfsCluster cluster;
  Files files;
  {
    auto v = open_volume(&cluster);
    files.make(*v);
    files.expect_intact(*v, "before the flush (dirty slots)");
    uint64_t durable = 0;
    ASSERT_EQ(v->flush(&durable), Status::Ok);
    files.expect_intact(*v, "after the flush (units)");
    IfsHealth s = v->health();
    EXPECT_EQ(s.files, 4u);
    EXPECT_GT(s.groups, 9u);
    EXPECT_EQ(s.groups_degraded, 0u);
    IfsVolume::FsckReport f = v->fsck();
    EXPECT_EQ(f.bad_parity + f.unreadable + f.lost, 0u);
  }
  // Every node's drives hold units.
  for (int n = 1; n <= 4; n++) {
    uint64_t bytes = 0;
    for (int d = 0; d < 4; d++)
      bytes += std::filesystem::file_size(cluster.dir() + "/n" + std::to_string(n) + "/drive-" + std::to_string(d) + ".units");
    EXPECT_GT(bytes, 1u << 20) << "node " << n;
  }
  auto again = open_volume(&cluster);
  files.expect_intact(*again, "after a reopen from the checkpoint");
}

TEST(IfsVolume, AcknowledgedWritesComeBackFromTheJournalAfterACrash) {
  testing::LocalIfsCluster cluster;
  char tmpl[] = "/tmp/nasd-ifs-test.XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  nvram::JournalOptions jo;
  jo.path = dir + "/nvram.img";
  jo.size = 64 << 20;
  jo.flush_interval = std::chrono::hours(1);
  Files files;
  {
    std::shared_ptr<IfsVolume> ifs = open_volume(&cluster);
    auto journal = nvram::Journal::open(jo);
    nvram::JournalVolume jv(journal, ifs);
    jv.recover();
    files.make(jv);
    ifs->abandon();  // the coordinator dies: nothing striped beyond what recover() flushed
    journal->shutdown();
  }
  std::shared_ptr<IfsVolume> ifs = open_volume(&cluster);
  EXPECT_TRUE(read_all(*ifs, "big").empty()) << "the crash lost nothing only thanks to the journal";
  auto journal = nvram::Journal::open(jo);
  nvram::JournalVolume jv(journal, ifs);
  jv.recover();
  files.expect_intact(jv, "after the journal's replay");
  journal->shutdown();
  std::filesystem::remove_all(dir);
}

TEST(IfsVolume, LoseANodeReprotectThenLoseTwoDrivesNothingLost) {
  testing::LocalIfsCluster cluster;
  auto v = open_volume(&cluster);
  Files files;
  files.make(*v);
  uint64_t durable = 0;
  ASSERT_EQ(v->flush(&durable), Status::Ok);
  cluster.kill(2);
  files.expect_intact(*v, "with node 2 dead (rebuilt from parity)");
  EXPECT_GT(v->health().groups_degraded, 0u);
  v->reprotect_now();
  IfsHealth s = v->health();
  EXPECT_EQ(s.groups_degraded, 0u) << s.text();
  EXPECT_GT(s.job.units_rebuilt, 0u);
  // Writes go on with what the survivors can give.
  files.content["after"] = pattern(2 * kSlotBytes + 5, 9);
  write_all(*v, make_file(*v, "after"), files.content["after"]);
  ASSERT_EQ(v->flush(&durable), Status::Ok);
  cluster.delete_drive(3, 1);
  cluster.delete_drive(4, 2);
  files.expect_intact(*v, "after two drives of nodes 3 and 4 were deleted too");
  IfsVolume::FsckReport f = v->fsck();
  EXPECT_EQ(f.lost, 0u);
  auto again = (v.reset(), open_volume(&cluster));
  files.expect_intact(*again, "reopened by a new coordinator on the survivors");
}

// The write-behind under load (the /r/ifs benchmark's stuck re-protect): a node alive in the
// topology refuses some unit puts (a full unit pool, a timed-out call). A group must not enter
// the catalog with units missing, or it looks fully protected while it holds only N+M-k units,
// and the loss of another node leaves it unrecoverable. Refused units are written again; a
// node that keeps refusing fails the flush (the records stay in NVRAM) until it answers again.
TEST(IfsVolume, UnitsRefusedByABusyNodeAreWrittenBeforeTheGroupIsRecorded) {
  testing::LocalIfsCluster cluster;
  auto v = open_volume(&cluster);
  Files files;
  files.content["a"] = pattern(2 * kSlotBytes, 21);  // two 6+2 groups
  write_all(*v, make_file(*v, "a"), files.content["a"]);
  // Node 3 refuses its next two puts: each group of the first flush would miss units there.
  cluster.refusing().refuse_puts(3, 2);
  uint64_t durable = 0;
  ASSERT_EQ(v->flush(&durable), Status::Ok);
  EXPECT_EQ(cluster.refusing().refused(), 2);
  IfsVolume::FsckReport f = v->fsck();
  EXPECT_EQ(f.unreadable, 0u) << "a group was recorded with units missing";
  // Node 2 refuses every put for a while: the write-behind fails rather than record groups
  // missing its units, the bytes stay readable (NVRAM and memory hold them), and the first
  // flush after node 2 answers again lands everything.
  files.content["b"] = pattern(kSlotBytes + 4096, 22);
  write_all(*v, make_file(*v, "b"), files.content["b"]);
  cluster.refusing().refuse_puts(2, -1);
  EXPECT_EQ(v->flush(&durable), Status::Io);
  files.expect_intact(*v, "after a failed write-behind");
  cluster.refusing().refuse_puts(2, 0);
  ASSERT_EQ(v->flush(&durable), Status::Ok);
  f = v->fsck();
  EXPECT_EQ(f.unreadable + f.bad_parity + f.lost, 0u);
  // Now a node dies: every group still has N+M-2 units, re-protect rebuilds all of them.
  cluster.kill(4);
  v->reprotect_now();
  IfsHealth s = v->health();
  EXPECT_EQ(s.groups_degraded, 0u) << s.text();
  EXPECT_EQ(s.job.unrecoverable, 0u) << s.text();
  files.expect_intact(*v, "after node 4 died and re-protect");
  f = v->fsck();
  EXPECT_EQ(f.unreadable + f.bad_parity + f.lost, 0u);
  auto again = (v.reset(), open_volume(&cluster));
  files.expect_intact(*again, "reopened by a new coordinator on the survivors");
}

// A drive's sync fails (fsync answered EIO: the units it was given may be gone from the page
// cache). The write-behind must not record the groups as complete: their units on that drive
// are put again and synced again; a drive that keeps failing fails the flush (nothing
// recorded, the bytes still held by NVRAM and the dirty slots) until a flush lands them.
TEST(IfsVolume, AFailedDriveSyncNeverLetsTheWriteBehindRecordTheGroups) {
  testing::LocalIfsCluster cluster;
  auto v = open_volume(&cluster);
  Files files;
  uint64_t durable = 0;
  ASSERT_EQ(v->flush(&durable), Status::Ok);
  const uint64_t generation = v->health().checkpoint_generation;
  files.content["a"] = pattern(2 * kSlotBytes, 31);
  write_all(*v, make_file(*v, "a"), files.content["a"]);
  // One failed sync on node 2: its units are put again and synced again; the flush lands.
  cluster.refusing().fail_syncs(2, 1);
  ASSERT_EQ(v->flush(&durable), Status::Ok);
  EXPECT_EQ(cluster.refusing().failed_syncs(), 1);
  EXPECT_GT(v->health().checkpoint_generation, generation);
  IfsVolume::FsckReport f = v->fsck();
  EXPECT_EQ(f.unreadable + f.bad_parity + f.lost, 0u);
  // Node 3's syncs fail for good: the flush fails, nothing new is recorded or checkpointed
  // (so the journal trims nothing: the records stay in NVRAM).
  files.content["b"] = pattern(kSlotBytes + 4096, 32);
  write_all(*v, make_file(*v, "b"), files.content["b"]);
  const IfsHealth before = v->health();
  cluster.refusing().fail_syncs(3, -1);
  EXPECT_EQ(v->flush(&durable), Status::Io);
  IfsHealth h = v->health();
  EXPECT_EQ(h.groups, before.groups) << "groups recorded although a drive's sync failed";
  EXPECT_EQ(h.checkpoint_generation, before.checkpoint_generation)
      << "a checkpoint would let the journal trim bytes that are not on the drives";
  EXPECT_EQ(h.dirty_bytes, before.dirty_bytes) << "the bytes must stay held until they land";
  files.expect_intact(*v, "after a failed sync");
  // The drive answers again: the next flush writes the slots again and records them.
  cluster.refusing().fail_syncs(3, 0);
  ASSERT_EQ(v->flush(&durable), Status::Ok);
  h = v->health();
  EXPECT_GT(h.checkpoint_generation, before.checkpoint_generation);
  EXPECT_GT(h.groups, before.groups);
  EXPECT_EQ(h.dirty_bytes, 0u);
  f = v->fsck();
  EXPECT_EQ(f.unreadable + f.bad_parity + f.lost, 0u);
  auto again = (v.reset(), open_volume(&cluster));
  files.expect_intact(*again, "reopened after the failed syncs");
}

// The orphan sweep between its snapshot and its listing: a client writes and the write-behind
// records new groups meanwhile. Their units are on the drives when they are listed, named by
// no record of the snapshot: only the fence (their versions are above its floor) keeps the
// sweep from deleting them.
TEST(IfsVolume, TheOrphanSweepKeepsGroupsWrittenWhileItLists) {
  testing::LocalIfsCluster cluster;
  auto v = open_volume(&cluster);
  Files files;
  files.content["before"] = pattern(kSlotBytes, 41);
  write_all(*v, make_file(*v, "before"), files.content["before"]);
  uint64_t durable = 0;
  ASSERT_EQ(v->flush(&durable), Status::Ok);
  cluster.refusing().hold_lists();
  SweepProgress swept;
  std::thread sweeper([&] { swept = v->sweep_now(); });
  for (int i = 0; i < 3000 && cluster.refusing().lists_waiting() == 0; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_GT(cluster.refusing().lists_waiting(), 0) << "the sweep never listed";
  files.content["during"] = pattern(2 * kSlotBytes + 5, 42);
  write_all(*v, make_file(*v, "during"), files.content["during"]);
  ASSERT_EQ(v->flush(&durable), Status::Ok);
  cluster.refusing().release_lists();
  sweeper.join();
  EXPECT_GE(swept.units_young, 16u) << swept.text();  // two 6+2 groups at least
  EXPECT_EQ(swept.units_dropped, 0u) << swept.text();
  files.expect_intact(*v, "after a sweep that listed while a client wrote");
  IfsVolume::FsckReport f = v->fsck();
  EXPECT_EQ(f.unreadable + f.bad_parity + f.lost, 0u);
  auto again = (v.reset(), open_volume(&cluster));
  files.expect_intact(*again, "reopened");
}

TEST(IfsVolume, TruncateAndRemoveLeaveNoStaleBytes) {
  testing::LocalIfsCluster cluster;
  auto v = open_volume(&cluster);
  auto data = pattern(2 * kSlotBytes, 5);
  fs::InodeId id = make_file(*v, "f");
  write_all(*v, id, data);
  uint64_t durable = 0;
  ASSERT_EQ(v->flush(&durable), Status::Ok);
  fs::SetAttr sa;
  sa.size = 1000;
  fs::Wcc wcc;
  ASSERT_EQ(v->setattr(root(), id, sa, std::nullopt, &wcc), Status::Ok);
  sa.size = data.size();
  ASSERT_EQ(v->setattr(root(), id, sa, std::nullopt, &wcc), Status::Ok);
  ASSERT_EQ(v->flush(&durable), Status::Ok);
  std::vector<uint8_t> want(data.size(), 0);
  std::copy(data.begin(), data.begin() + 1000, want.begin());
  EXPECT_TRUE(read_all(*v, "f") == want);
  auto again = (v.reset(), open_volume(&cluster));
  EXPECT_TRUE(read_all(*again, "f") == want);
}

}  // namespace
}  // namespace nasd::scaleout
