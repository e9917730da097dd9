// A node joining a running scale-out volume, and the scrub, on in-process nodes: the
// rebalance job that a joined node starts (units move onto it while a client writes, and it
// ends with about its fair share), a coordinator killed in the middle of that rebalance (the
// next one opens the last checkpoint, nothing is lost, and its pass finishes the job), and a
// scrub that finds a unit corrupted on its drive by checksum and rewrites it from parity.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "cluster/scaleout/catalog_text.h"
#include "cluster/scaleout/ifs_volume.h"
#include "cluster/scaleout/scaleout_fsck.h"
#include "cluster/scaleout/unit_store.h"
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

std::unique_ptr<IfsVolume> open_volume(IfsCluster* c) {
  IfsOptions o;
  o.name = "ifs";
  o.volume_id = 100;
  std::string err;
  auto v = IfsVolume::open(o, c, &err);
  EXPECT_TRUE(v) << err;
  return v;
}

void write_file(fs::Volume& v, const std::string& name, const std::vector<uint8_t>& data) {
  fs::InodeId id;
  std::optional<fs::Attr> attr;
  fs::Wcc wcc;
  ASSERT_EQ(v.create(root(), v.root(), name, fs::CreateMode::Guarded, {}, 0, &id, &attr, &wcc), Status::Ok);
  for (size_t at = 0; at < data.size(); at += 65536) {
    const size_t n = std::min<size_t>(65536, data.size() - at);
    fs::Stability committed;
    ASSERT_EQ(v.write(root(), id, at, std::span(data.data() + at, n), fs::Stability::FileSync,
                      &committed, &wcc), Status::Ok);
  }
}

std::vector<uint8_t> read_file(fs::Volume& v, const std::string& name) {
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

// Twelve files of 1.5 MiB and a few small ones: 30-odd 6+2 groups and mirrors.
std::map<std::string, std::vector<uint8_t>> make_files(fs::Volume& v) {
  std::map<std::string, std::vector<uint8_t>> files;
  for (int i = 0; i < 12; i++) files["f" + std::to_string(i)] = pattern(3 * kSlotBytes / 2 + i, 10 + i);
  for (int i = 0; i < 4; i++) files["s" + std::to_string(i)] = pattern(5000 + i, 50 + i);
  for (auto& [name, data] : files) write_file(v, name, data);
  return files;
}

void expect_intact(fs::Volume& v, const std::map<std::string, std::vector<uint8_t>>& files,
                   const std::string& when) {
  for (const auto& [name, data] : files) EXPECT_TRUE(read_file(v, name) == data) << name << " " << when;
}

double share_of(const ProtectionStatus& s, uint32_t node) {
  uint64_t all = 0;
  for (const auto& [n, c] : s.units_per_node) all += c;
  auto it = s.units_per_node.find(node);
  return all && it != s.units_per_node.end() ? double(it->second) / double(all) : 0;
}

// Stands for the coordinator's process: its unit calls reach the drives until it is killed
// (after `puts_before_kill` puts onto node `watch`), and never after: kill -9 in the middle
// of a rebalance, with whatever it had not checkpointed lost to it.
class DyingCoordinator : public IfsCluster, public UnitAccess {
 public:
  DyingCoordinator(testing::LocalIfsCluster* real, uint32_t watch, int puts_before_kill)
      : real_(real), watch_(watch), left_(puts_before_kill) {}
  bool dead() const { return dead_; }

  UnitAccess* units() override { return this; }
  Topology topology() override { return real_->topology(); }
  uint32_t drives_per_node() const override { return real_->drives_per_node(); }

  UnitStatus put(const UnitPlace& at, const UnitKey& key, const uint8_t* data, uint32_t len) override {
    if (at.node == watch_ && --left_ < 0) dead_ = true;
    return dead_ ? UnitStatus::Unreachable : real_->units()->put(at, key, data, len);
  }
  UnitStatus get(const UnitPlace& at, const UnitKey& key, std::vector<uint8_t>* out) override {
    return dead_ ? UnitStatus::Unreachable : real_->units()->get(at, key, out);
  }
  UnitStatus remove(const UnitPlace& at, const UnitKey& key) override {
    return dead_ ? UnitStatus::Unreachable : real_->units()->remove(at, key);
  }
  UnitStatus sync(const UnitPlace& at) override {
    return dead_ ? UnitStatus::Unreachable : real_->units()->sync(at);
  }
  UnitStatus list(const UnitPlace& at, const UnitKey& from, uint32_t max, std::vector<UnitKey>* out,
                  bool* more) override {
    return dead_ ? UnitStatus::Unreachable : real_->units()->list(at, from, max, out, more);
  }

 private:
  testing::LocalIfsCluster* real_;
  const uint32_t watch_;
  std::atomic<int> left_;
  std::atomic<bool> dead_{false};
};

TEST(IfsJoin, AJoinedNodeIsRebalancedOntoWhileAClientWrites) {
  testing::LocalIfsCluster cluster(4);
  auto v = open_volume(&cluster);
  auto files = make_files(*v);
  uint64_t durable = 0;
  ASSERT_EQ(v->flush(&durable), Status::Ok);
  EXPECT_EQ(v->group_status(0).units_per_node.size(), 4u);

  const uint32_t added = cluster.add_node();
  ProtectionStatus before = v->group_status(0);
  EXPECT_GT(before.groups_unbalanced, 0u) << "a joined node holds nothing yet: groups are due to move";
  EXPECT_EQ(share_of(before, added), 0.0);

  // A client writes (and the write-behind flushes) while the rebalance runs.
  std::atomic<bool> done{false};
  std::vector<uint8_t> during = pattern(2 * kSlotBytes + 99, 77);
  std::thread client([&] {
    write_file(*v, "during", during);
    while (!done) {
      uint64_t d = 0;
      v->flush(&d);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  v->reprotect_now();
  done = true;
  client.join();
  files["during"] = during;
  // A group a client rewrote under a task is moved by the next pass.
  for (int i = 0; i < 3 && v->group_status(0).groups_unbalanced > 0; i++) v->reprotect_now();

  ProtectionStatus after = v->group_status(0);
  EXPECT_EQ(after.groups_unbalanced, 0u);
  EXPECT_EQ(after.groups_degraded, 0u);
  EXPECT_GT(after.job.groups_moved + v->health().job.groups_moved, 0u);
  // Its fair share: a 6+2/2 group on five nodes deals its units to four of them, so a node's
  // share is 20 %; mirrors and the draw of each group's node order make it vary.
  EXPECT_GT(share_of(after, added), 0.12) << format_protection_status("ifs", after);
  EXPECT_LT(share_of(after, added), 0.30) << format_protection_status("ifs", after);
  expect_intact(*v, files, "after the rebalance");
  IfsVolume::FsckReport f = v->fsck();
  EXPECT_EQ(f.bad_parity + f.unreadable + f.lost, 0u);
  // With the old nodes' share moved, the new node holds real units: lose another node and
  // everything still reads.
  cluster.kill(1);
  expect_intact(*v, files, "after the rebalance, node 1 dead");
}

TEST(IfsJoin, ACoordinatorKilledMidRebalanceLosesNothingAndTheNextOneFinishes) {
  testing::LocalIfsCluster cluster(4);
  std::map<std::string, std::vector<uint8_t>> files;
  {
    auto v = open_volume(&cluster);
    files = make_files(*v);
    uint64_t durable = 0;
    ASSERT_EQ(v->flush(&durable), Status::Ok);
  }
  const uint32_t added = cluster.add_node();
  {
    // The coordinator checkpoints every 2 commits and dies after 14 units landed on node 5
    // (about the seventh moved group): some moves are checkpointed, some were not.
    DyingCoordinator dying(&cluster, added, 14);
    auto v = open_volume(&dying);
    v->set_pass_checkpoint_batch(2);
    v->reprotect_now();
    ASSERT_TRUE(dying.dead()) << "the rebalance ended before the kill";
  }  // gone: nothing more is written
  auto next = open_volume(&cluster);
  expect_intact(*next, files, "opened by the next coordinator after the kill");
  ProtectionStatus resumed = next->group_status(0);
  EXPECT_GT(share_of(resumed, added), 0.0) << "no checkpointed move survived the kill";
  EXPECT_GT(resumed.groups_unbalanced, 0u) << "the kill came after the whole rebalance";
  next->reprotect_now();
  ProtectionStatus after = next->group_status(0);
  EXPECT_EQ(after.groups_unbalanced, 0u);
  EXPECT_EQ(after.groups_degraded, 0u);
  EXPECT_GT(share_of(after, added), 0.12) << format_protection_status("ifs", after);
  expect_intact(*next, files, "after the resumed rebalance");
  IfsVolume::FsckReport f = next->fsck();
  EXPECT_EQ(f.bad_parity + f.unreadable + f.lost, 0u);
}

// The restripe job (a directory's policy changed) is crash-safe in the same way: a coordinator
// killed mid-restripe leaves the last checkpoint naming complete groups (old shape or new), the
// next one opens it with the policy (checkpointed before the admin was answered) and finishes.
TEST(IfsJoin, ACoordinatorKilledMidRestripeLosesNothingAndTheNextOneFinishes) {
  testing::LocalIfsCluster cluster(4);
  std::map<std::string, std::vector<uint8_t>> files;
  {
    auto v = open_volume(&cluster);
    files = make_files(*v);
    uint64_t durable = 0;
    ASSERT_EQ(v->flush(&durable), Status::Ok);
    ProtectionPolicy plus1n;
    std::string error;
    ASSERT_TRUE(parse_protection_policy("+1n", &plus1n, &error));
    ASSERT_TRUE(v->set_directory_policy("/", plus1n, &error)) << error;  // every file below
    EXPECT_GT(v->group_status(0).groups_misshaped, 0u);
  }
  {
    // Checkpoints every 2 commits; dies after 40 units put on node 2 (mid-pass).
    DyingCoordinator dying(&cluster, 2, 40);
    auto v = open_volume(&dying);
    v->set_pass_checkpoint_batch(2);
    v->reprotect_now();
    ASSERT_TRUE(dying.dead()) << "the restripe ended before the kill";
  }
  auto next = open_volume(&cluster);
  expect_intact(*next, files, "opened by the next coordinator after the kill");
  const ProtectionStatus resumed = next->group_status(0);
  EXPECT_GT(resumed.groups_misshaped, 0u) << "the kill came after the whole restripe";
  EXPECT_LT(resumed.groups_misshaped, resumed.groups) << "no checkpointed restripe survived";
  next->reprotect_now();
  const ProtectionStatus after = next->group_status(1000);
  EXPECT_EQ(after.groups_misshaped, 0u);
  EXPECT_EQ(after.groups_degraded, 0u);
  for (const GroupStatus& g : after.listed) EXPECT_EQ(g.shape.parity, 1) << g.file << "@" << g.offset;
  expect_intact(*next, files, "after the resumed restripe");
  IfsVolume::FsckReport f = next->fsck();
  EXPECT_EQ(f.bad_parity + f.unreadable + f.lost, 0u);
}

// Every data unit (not the metadata image's) held on every drive of the cluster, by place.
std::set<std::pair<std::pair<uint32_t, uint32_t>, UnitKey>> held_units(testing::LocalIfsCluster& c) {
  std::set<std::pair<std::pair<uint32_t, uint32_t>, UnitKey>> out;
  for (const NodeState& n : c.topology().nodes)
    for (uint32_t d = 0; d < n.drives.size(); d++) {
      UnitKey from;
      for (int page = 0; page < 1000; page++) {
        std::vector<UnitKey> keys;
        bool more = false;
        if (c.units()->list(UnitPlace{n.id, d}, from, 64, &keys, &more) != UnitStatus::Ok) break;
        for (const UnitKey& k : keys)
          if (k.file != kMetadataFile) out.insert({{n.id, d}, k});
        if (!more || keys.empty()) break;
        from = next_key(keys.back());
      }
    }
  return out;
}

std::set<std::pair<std::pair<uint32_t, uint32_t>, UnitKey>> catalog_units(IfsVolume& v) {
  std::vector<GroupRecord> catalog;
  std::string error;
  EXPECT_TRUE(decode_catalog(v.catalog_text(), &catalog, &error)) << error;
  std::set<std::pair<std::pair<uint32_t, uint32_t>, UnitKey>> out;
  for (const GroupRecord& r : catalog)
    for (size_t i = 0; i < r.places.size(); i++) out.insert({{r.places[i].node, r.places[i].drive}, r.key(int(i))});
  return out;
}

// A coordinator killed in the middle of a rebalance leaves the units of its tasks whose
// commits no checkpoint holds on the drives, named by nothing. The next coordinator's orphan
// sweep finds them by listing every drive and deletes them, and only them: afterwards the
// drives hold exactly the catalog's units, fsck (the volume's and nasd-fsck's engine) is
// clean and every file reads back, also through a sweep that runs while a client writes.
TEST(IfsJoin, TheOrphanSweepReclaimsTheUnitsOfAKilledCoordinatorsTasks) {
  testing::LocalIfsCluster cluster(4);
  std::map<std::string, std::vector<uint8_t>> files;
  {
    auto v = open_volume(&cluster);
    files = make_files(*v);
    uint64_t durable = 0;
    ASSERT_EQ(v->flush(&durable), Status::Ok);
  }
  const uint32_t added = cluster.add_node();
  {
    DyingCoordinator dying(&cluster, added, 14);
    auto v = open_volume(&dying);
    v->set_pass_checkpoint_batch(4);
    v->reprotect_now();
    ASSERT_TRUE(dying.dead()) << "the rebalance ended before the kill";
  }
  auto next = open_volume(&cluster);
  next->reprotect_now();  // finishes the rebalance; the dead one's uncommitted units stay
  ASSERT_EQ(next->group_status(0).groups_unbalanced, 0u);
  auto held = held_units(cluster);
  auto named = catalog_units(*next);
  size_t orphans = 0;
  for (const auto& u : held) orphans += named.count(u) ? 0 : 1;
  ASSERT_GT(orphans, 0u) << "the kill left no orphan: the test proves nothing";
  for (const auto& u : named) ASSERT_TRUE(held.count(u)) << "a catalog unit is missing before the sweep";

  // The sweep runs while a client writes and the write-behind flushes: the units of a flush in
  // flight (written, not yet recorded) must survive it.
  std::atomic<bool> done{false};
  std::vector<uint8_t> during = pattern(3 * kSlotBytes + 7, 91);
  std::thread client([&] {
    write_file(*next, "during", during);
    while (!done) {
      uint64_t d = 0;
      next->flush(&d);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  const SweepProgress swept = next->sweep_now();
  done = true;
  client.join();
  files["during"] = during;
  EXPECT_GE(swept.units_dropped, orphans) << swept.text();
  EXPECT_EQ(swept.drives_skipped, 0u) << swept.text();
  EXPECT_EQ(next->health().sweep.units_dropped_total, swept.units_dropped);
  EXPECT_NE(next->health().text().find("orphan sweep"), std::string::npos);
  EXPECT_NE(format_protection_status("ifs", next->group_status(0)).find("orphans dropped"), std::string::npos);
  expect_intact(*next, files, "after the sweep");
  uint64_t durable = 0;
  ASSERT_EQ(next->flush(&durable), Status::Ok);
  next->sweep_now();  // the units the write-behind superseded meanwhile are deleted already
  held = held_units(cluster);
  named = catalog_units(*next);
  EXPECT_EQ(held, named) << "the drives hold units the catalog does not name, or lack some";
  IfsVolume::FsckReport f = next->fsck();
  EXPECT_EQ(f.bad_parity + f.unreadable + f.lost, 0u);
  std::vector<GroupRecord> catalog;
  std::string error;
  ASSERT_TRUE(decode_catalog(next->catalog_text(), &catalog, &error)) << error;
  GroupIo io(cluster.units());
  const FsckReport offline = fsck_groups(io, catalog);
  EXPECT_TRUE(offline.clean()) << format_fsck_report(offline);
  auto again = (next.reset(), open_volume(&cluster));
  expect_intact(*again, files, "reopened after the sweep");
}

// Flips bytes in the payload of the newest put of `key` on a drive's backing file, as bit rot
// would: the record header stays valid, only the payload's CRC32C no longer matches.
bool corrupt_unit(const std::string& drive_file, const UnitKey& key) {
  std::fstream f(drive_file, std::ios::in | std::ios::out | std::ios::binary);
  if (!f) return false;
  f.seekg(0, std::ios::end);
  const uint64_t size = uint64_t(f.tellg());
  uint64_t at = kDriveHeaderBytes, found = 0;
  uint8_t h[kUnitRecordHeaderBytes];
  auto le = [&](int off, int n) {
    uint64_t x = 0;
    for (int i = n - 1; i >= 0; i--) x = x << 8 | h[off + i];
    return x;
  };
  while (at + kUnitRecordHeaderBytes <= size) {
    f.seekg(std::streamoff(at));
    f.read(reinterpret_cast<char*>(h), sizeof h);
    if (!f || le(0, 4) != 0x54494e55) break;
    const uint64_t len = le(36, 4);
    if (h[4] == 1 && le(8, 8) == key.file && le(16, 8) == key.group && le(24, 8) == key.version &&
        le(32, 2) == key.index)
      found = at + kUnitRecordHeaderBytes;
    at += kUnitRecordHeaderBytes + len;
  }
  if (!found) return false;
  f.clear();
  f.seekp(std::streamoff(found + 100));
  const char junk[16] = {'r', 'o', 't', 't', 'e', 'n', ' ', 'b', 'y', 't', 'e', 's', '!', '!', '!', '!'};
  f.write(junk, sizeof junk);
  return bool(f);
}

TEST(IfsJoin, ScrubFindsACorruptedUnitByChecksumAndRepairsItFromParity) {
  testing::LocalIfsCluster cluster(4);
  auto v = open_volume(&cluster);
  auto files = make_files(*v);
  uint64_t durable = 0;
  ASSERT_EQ(v->flush(&durable), Status::Ok);
  // A data unit and a parity unit of one 6+2 group, on their drives.
  std::vector<GroupRecord> catalog;
  std::string error;
  ASSERT_TRUE(decode_catalog(v->catalog_text(), &catalog, &error)) << error;
  const GroupRecord* g = nullptr;
  for (const GroupRecord& r : catalog)
    if (r.shape.data > 1) g = &r;
  ASSERT_TRUE(g);
  for (uint16_t index : {uint16_t(0), uint16_t(g->shape.data)}) {
    const UnitPlace& p = g->places[index];
    const std::string drive = cluster.dir() + "/n" + std::to_string(p.node) + "/drive-" +
                              std::to_string(p.drive) + ".units";
    ASSERT_TRUE(corrupt_unit(drive, UnitKey{g->file, g->group, g->version, index})) << drive;
  }
  IfsVolume::FsckReport before = v->fsck();
  EXPECT_EQ(before.unreadable, 1u) << "fsck does not see the corrupted units";
  expect_intact(*v, files, "with two corrupted units (rebuilt from parity on the fly)");

  v->scrub_now();
  IfsHealth h = v->health();
  EXPECT_EQ(h.job.kind, JobKind::Scrub);
  EXPECT_EQ(h.job.done, catalog.size());
  EXPECT_GE(h.job.units_rebuilt, 2u);
  IfsVolume::FsckReport after = v->fsck();
  EXPECT_EQ(after.bad_parity + after.unreadable + after.lost, 0u) << "the scrub left bad units";
  expect_intact(*v, files, "after the scrub");
  auto again = (v.reset(), open_volume(&cluster));
  expect_intact(*again, files, "reopened after the scrub");
}

}  // namespace
}  // namespace nasd::scaleout
