// Groups over the unit stores of four in-process "nodes" (4 drives each): the issue's
// scenario without the network: write, lose a node (degraded reads), re-protect back to full
// protection, lose two drives on two other nodes, scrub a corrupted unit, fsck after each.
#include "cluster/scaleout/group_io.h"
#include "cluster/scaleout/job_driver.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sys/wait.h>
#include <filesystem>
#include <random>
#include <thread>

#include "tests/cluster/scratch_dir.h"

namespace nasd::scaleout {
namespace {

using cluster::testing::ScratchDir;

struct File {
  uint64_t id;
  std::vector<uint8_t> bytes;
  std::vector<GroupRecord> groups;
};

class FourNodes : public ::testing::Test {
 protected:
  void SetUp() override {
    for (uint32_t id = 1; id <= 4; ++id) {
      std::unique_ptr<NodeUnits> n;
      std::string err;
      ASSERT_TRUE(NodeUnits::open(dir_.path + "/node" + std::to_string(id), 77, id, 4, &n, &err))
          << err;
      units_.add(n.get());
      nodes_.push_back(std::move(n));
      NodeState s;
      s.id = id;
      s.drives.resize(4);
      topo_.nodes.push_back(s);
    }
  }

  File write_file(uint64_t id, size_t size) {
    File f{id, std::vector<uint8_t>(size), {}};
    for (auto& b : f.bytes) b = static_cast<uint8_t>(rng_());
    std::string err;
    EXPECT_TRUE(GroupIo::plan_extent(policy_, topo_, id, 0, next_version_, 0, size, &f.groups,
                                     &err)) << err;
    next_version_ += 100;
    for (GroupRecord& g : f.groups) {
      std::vector<int> failed;
      EXPECT_TRUE(io_.write_group(g, f.bytes.data() + g.offset, &failed, &err)) << err;
      EXPECT_TRUE(failed.empty());
    }
    return f;
  }

  void expect_reads(const File& f) {
    for (const GroupRecord& g : f.groups) {
      std::vector<uint8_t> out;
      std::string err;
      ASSERT_TRUE(io_.read_group(g, &out, nullptr, &err)) << "file " << f.id << ": " << err;
      ASSERT_EQ(0, std::memcmp(out.data(), f.bytes.data() + g.offset, g.length)) << f.id;
    }
  }

  // fsck: every group's parity consistent and every unit readable (when `full`).
  void expect_fsck(const std::vector<File>& files, bool full) {
    for (const File& f : files) {
      for (const GroupRecord& g : f.groups) {
        GroupHealth h = io_.verify_group(g);
        EXPECT_TRUE(h.bad_parity.empty()) << f.id;
        EXPECT_TRUE(h.readable) << f.id;
        if (full) {
          EXPECT_TRUE(h.unreadable.empty()) << f.id << " group " << g.group;
        }
      }
    }
  }

  // Re-protect every group against the current topology; returns units rebuilt.
  int reprotect(std::vector<File>* files) {
    int total = 0;
    for (File& f : *files) {
      std::vector<GroupRecord> next;
      for (const GroupRecord& g : f.groups) {
        std::vector<GroupRecord> repl;
        int rebuilt = 0;
        std::string err;
        EXPECT_TRUE(io_.repair_group(g, policy_, topo_, next_version_, &repl, &rebuilt, &err))
            << err;
        next_version_ += 100;
        total += rebuilt;
        for (auto& r : repl) {
          EXPECT_EQ(check_placement(r.shape, topo_, r.places, true), "");
          EXPECT_FALSE(r.shape.under_protected);
          next.push_back(r);
        }
      }
      f.groups = std::move(next);
    }
    return total;
  }

  ScratchDir dir_{"scaleout"};
  std::vector<std::unique_ptr<NodeUnits>> nodes_;
  LocalUnits units_;
  GroupIo io_{&units_};
  Topology topo_;
  ProtectionPolicy policy_;
  std::mt19937_64 rng_{1234};
  uint32_t next_version_ = 1;
};

TEST_F(FourNodes, WritesSixPlusTwoAndMirrorsSmallFiles) {
  File big = write_file(1, 3 * 6 * kStripeUnit + 5000);
  ASSERT_EQ(big.groups.size(), 4u);
  EXPECT_EQ(big.groups[0].shape.data, 6);
  EXPECT_EQ(big.groups[0].shape.parity, 2);
  EXPECT_EQ(big.groups[3].length, 5000u);
  EXPECT_EQ(big.groups[3].shape.data, 1);  // the 5000-byte tail is a mirrored unit
  File small = write_file(2, 777);
  ASSERT_EQ(small.groups.size(), 1u);
  EXPECT_EQ(small.groups[0].shape.width(), 3);
  expect_reads(big);
  expect_reads(small);
  expect_fsck({big, small}, true);
}

TEST_F(FourNodes, LoseANodeThenTwoDrivesNothingLost) {
  std::vector<File> files;
  for (uint64_t id = 1; id <= 12; ++id) files.push_back(write_file(id, 1 + rng_() % (20 * kStripeUnit)));
  expect_fsck(files, true);

  // kill -9 of node 3: its units are unreachable; every read is rebuilt from parity.
  units_.set_down(3, true);
  topo_.nodes[2].alive = false;
  for (const File& f : files) expect_reads(f);
  expect_fsck(files, false);

  // Re-protect on the three survivors: back to full +2d:1n (narrower groups where needed).
  int rebuilt = reprotect(&files);
  EXPECT_GT(rebuilt, 0);
  expect_fsck(files, true);
  for (const File& f : files) expect_reads(f);

  // Two drives on two other nodes deleted: still everything readable.
  std::filesystem::remove(dir_.path + "/node1/drive-2.units");
  std::filesystem::remove(dir_.path + "/node4/drive-0.units");
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * NodeUnits::kAliveCheckMs));
  EXPECT_FALSE(nodes_[0]->drive_healthy(2));
  EXPECT_FALSE(nodes_[3]->drive_healthy(0));
  for (const File& f : files) expect_reads(f);
  topo_.nodes[0].drives[2].healthy = false;
  topo_.nodes[3].drives[0].healthy = false;
  EXPECT_GT(reprotect(&files), 0);
  expect_fsck(files, true);
  for (const File& f : files) expect_reads(f);
}

TEST_F(FourNodes, ThreeLostUnitsOfAGroupAreReportedNotMisread) {
  File f = write_file(1, 6 * kStripeUnit);
  const GroupRecord& g = f.groups[0];
  for (int i = 0; i < 3; ++i) {
    std::filesystem::remove(dir_.path + "/node" + std::to_string(g.places[i].node) + "/drive-" +
                            std::to_string(g.places[i].drive) + ".units");
  }
  // Unit I/O notices a deleted drive within NodeUnits::kAliveCheckMs (until then the open
  // file still reads back its CRC-checked units).
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * NodeUnits::kAliveCheckMs));
  std::vector<uint8_t> out;
  std::string err;
  EXPECT_FALSE(io_.read_group(g, &out, nullptr, &err));
  EXPECT_NE(err, "");
}

TEST_F(FourNodes, ScrubRepairsACorruptedUnitInPlace) {
  File f = write_file(1, 6 * kStripeUnit);
  const GroupRecord g = f.groups[0];
  // Flip one byte of data unit 2's payload on its drive.
  const UnitPlace at = g.places[2];
  const std::string path = dir_.path + "/node" + std::to_string(at.node) + "/drive-" +
                           std::to_string(at.drive) + ".units";
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  const off_t off = static_cast<off_t>(kDriveHeaderBytes + kUnitRecordHeaderBytes + 4242);
  uint8_t c = 0;
  ASSERT_EQ(::pread(fd, &c, 1, off), 1);
  c ^= 1;
  ASSERT_EQ(::pwrite(fd, &c, 1, off), 1);
  ::close(fd);
  GroupHealth h = io_.verify_group(g);
  ASSERT_EQ(h.corrupt.size(), 1u);
  EXPECT_EQ(h.corrupt[0], 2);
  expect_reads(f);  // rebuilt from parity on the fly
  std::vector<GroupRecord> repl;
  int rebuilt = 0;
  std::string err;
  ASSERT_TRUE(io_.repair_group(g, policy_, topo_, 999, &repl, &rebuilt, &err)) << err;
  EXPECT_EQ(rebuilt, 1);
  ASSERT_EQ(repl.size(), 1u);
  EXPECT_EQ(repl[0].places, g.places);  // repaired where it was
  h = io_.verify_group(repl[0]);
  EXPECT_TRUE(h.unreadable.empty());
  EXPECT_TRUE(h.bad_parity.empty());
}

TEST_F(FourNodes, FsckFindsParityThatDisagrees) {
  File f = write_file(1, 6 * kStripeUnit);
  GroupRecord g = f.groups[0];
  // A parity unit rewritten with other (checksummed, so "healthy") bytes.
  std::vector<uint8_t> junk(g.unit_bytes(), 0x5A);
  ASSERT_EQ(units_.put(g.places[7], g.key(7), junk.data(), g.unit_bytes()), UnitStatus::Ok);
  GroupHealth h = io_.verify_group(g);
  ASSERT_EQ(h.bad_parity.size(), 1u);
  EXPECT_EQ(h.bad_parity[0], 7);
}

TEST_F(FourNodes, ReprotectJobReturnsToFullProtectionWithProgress) {
  std::vector<File> files;
  std::vector<GroupRecord> all;
  for (uint64_t id = 1; id <= 8; ++id) {
    files.push_back(write_file(id, 1 + rng_() % (14 * kStripeUnit)));
    for (const GroupRecord& g : files.back().groups) all.push_back(g);
  }
  ProtectionJob job(JobConfig{}, 1, topo_);
  job.load(all);
  JobDriver driver(&job, &units_, policy_);
  EXPECT_EQ(driver.run(0), 0);  // nothing to do at full protection
  EXPECT_FALSE(job.progress().running);

  units_.set_down(2, true);  // node 2 killed
  topo_.nodes[1].alive = false;
  job.topology_changed(1, topo_);
  JobProgress before = job.progress();
  EXPECT_TRUE(before.running);
  EXPECT_GT(before.groups_degraded, 0u);
  EXPECT_EQ(before.done, 0u);
  // Part of the way: progress is visible while the job runs.
  EXPECT_EQ(driver.run(2, 3), 3);
  EXPECT_EQ(job.progress().done, 3u);
  driver.run(3);
  JobProgress after = job.progress();
  EXPECT_FALSE(after.running);
  EXPECT_EQ(after.groups_degraded, 0u);
  EXPECT_EQ(after.unrecoverable, 0u);
  EXPECT_EQ(after.done, before.total);
  EXPECT_GT(after.units_rebuilt, 0u);
  // Everything reads back through the new records, and fsck finds every parity consistent.
  for (File& f : files) {
    f.groups.clear();
    for (const auto& [e, r] : job.catalog()) {
      if (r.file == f.id) f.groups.push_back(r);
    }
    expect_reads(f);
  }
  expect_fsck(files, true);
  // The superseded units on the survivors were deleted after the commits.
  uint64_t live_units = 0, referenced = 0;
  for (uint32_t n : {1u, 3u, 4u}) {
    for (uint32_t d = 0; d < 4; ++d) live_units += nodes_[n - 1]->drive(d)->keys().size();
  }
  for (const auto& [e, r] : job.catalog()) referenced += r.places.size();
  EXPECT_EQ(live_units, referenced);
}

}  // namespace
}  // namespace nasd::scaleout

namespace nasd::scaleout {
namespace {

// OneFS AutoBalance: four nodes hold a volume, a fifth joins with empty drives; the rebalance
// job that the topology change starts gives it its share, every file reads back, and fsck finds
// every parity consistent. Superseded units are gone: each unit on a drive is one the catalog uses.
TEST_F(FourNodes, AddingAFifthNodeRebalancesOntoIt) {
  std::vector<File> files;
  std::vector<GroupRecord> all;
  for (uint64_t id = 1; id <= 10; ++id) {
    files.push_back(write_file(id, 1 + rng_() % (20 * kStripeUnit)));
    for (const GroupRecord& g : files.back().groups) all.push_back(g);
  }
  ProtectionJob job(JobConfig{}, 1, topo_);
  job.load(all);
  JobDriver driver(&job, &units_, policy_);
  EXPECT_EQ(driver.run(0), 0);  // four nodes: balanced already
  EXPECT_EQ(job.progress().groups_unbalanced, 0u);

  std::unique_ptr<NodeUnits> fifth;
  std::string err;
  ASSERT_TRUE(NodeUnits::open(dir_.path + "/node5", 77, 5, 4, &fifth, &err)) << err;
  units_.add(fifth.get());
  NodeState s;
  s.id = 5;
  s.drives.resize(4);
  topo_.nodes.push_back(s);
  job.topology_changed(1, topo_);
  JobProgress before = job.progress();
  EXPECT_TRUE(before.running);
  EXPECT_EQ(before.kind, JobKind::Rebalance);
  EXPECT_GT(before.groups_unbalanced, 0u);
  EXPECT_EQ(before.groups_degraded, 0u);
  // Part of the way: every group stays readable and fully protected while it runs.
  EXPECT_EQ(driver.run(2, 4), 4);
  EXPECT_EQ(job.progress().groups_degraded, 0u);
  driver.run(3);
  JobProgress after = job.progress();
  EXPECT_FALSE(after.running);
  EXPECT_EQ(after.groups_unbalanced, 0u);
  EXPECT_EQ(after.groups_degraded, 0u);
  EXPECT_EQ(after.unrecoverable, 0u);
  EXPECT_GT(after.groups_moved, 0u);

  uint64_t referenced = 0, on_fifth_in_catalog = 0;
  for (const auto& [e, r] : job.catalog()) {
    referenced += r.places.size();
    for (const UnitPlace& p : r.places) on_fifth_in_catalog += p.node == 5 ? 1 : 0;
    EXPECT_TRUE(job.balanced(r));
  }
  uint64_t live_units = 0, on_fifth = 0;
  for (uint32_t d = 0; d < 4; ++d) on_fifth += fifth->drive(d)->keys().size();
  for (uint32_t n = 1; n <= 4; ++n) {
    for (uint32_t d = 0; d < 4; ++d) live_units += nodes_[n - 1]->drive(d)->keys().size();
  }
  live_units += on_fifth;
  EXPECT_EQ(live_units, referenced);
  EXPECT_EQ(on_fifth, on_fifth_in_catalog);
  // Its share: the groups of 3..8 units over five nodes put at least a tenth of them there.
  EXPECT_GE(on_fifth * 10, referenced) << on_fifth << " of " << referenced;

  for (File& f : files) {
    f.groups.clear();
    for (const auto& [e, r] : job.catalog()) {
      if (r.file == f.id) f.groups.push_back(r);
    }
    expect_reads(f);
  }
  expect_fsck(files, true);

  // And the new node counts: kill node 1, everything still reads (from parity).
  units_.set_down(1, true);
  for (const File& f : files) expect_reads(f);
}

}  // namespace
}  // namespace nasd::scaleout

#include "cluster/scaleout/protection_status.h"
#include "cluster/scaleout/scaleout_fsck.h"

namespace nasd::scaleout {
namespace {

// `nasd-admin ... protection`: each group's health and the job's progress, before, during and
// after a re-protect.
TEST_F(FourNodes, ProtectionStatusShowsGroupHealthAndJobProgress) {
  std::vector<GroupRecord> all;
  for (uint64_t id = 1; id <= 6; ++id) {
    File f = write_file(id, 1 + rng_() % (14 * kStripeUnit));
    all.insert(all.end(), f.groups.begin(), f.groups.end());
  }
  ProtectionJob job(JobConfig{}, 1, topo_);
  job.load(all);
  ProtectionBoard board;
  EXPECT_NE(board.render({}).find("no scale-out volume"), std::string::npos);
  board.publish("ifs", protection_status(job, policy_, 100));
  std::string text = board.render({});
  EXPECT_NE(text.find("volume ifs: protection +2d:1n, FULL"), std::string::npos) << text;
  EXPECT_NE(text.find("groups " + std::to_string(all.size()) + ": " + std::to_string(all.size()) +
                      " full, 0 degraded, 0 lost"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("job idle"), std::string::npos) << text;

  units_.set_down(3, true);
  topo_.nodes[2].alive = false;
  job.topology_changed(1, topo_);
  JobDriver driver(&job, &units_, policy_);
  driver.run(2, 2);
  ProtectionStatus s = protection_status(job, policy_, 3);
  EXPECT_GT(s.groups_degraded, 0u);
  EXPECT_EQ(s.groups_lost, 0u);
  EXPECT_GT(s.units_lost, 0u);
  EXPECT_EQ(s.groups_full + s.groups_degraded, s.groups);
  ASSERT_EQ(s.listed.size(), 3u);  // bounded, the degraded ones first
  EXPECT_EQ(s.listed[0].state, GroupState::Degraded);
  EXPECT_EQ(s.not_listed, s.groups - 3);
  board.publish("ifs", s);
  text = board.render({"ifs"});
  EXPECT_NE(text.find("DEGRADED"), std::string::npos) << text;
  EXPECT_NE(text.find("job running: reprotect 2/"), std::string::npos) << text;
  EXPECT_NE(text.find("more groups not listed"), std::string::npos) << text;

  driver.run(3);
  board.publish("ifs", protection_status(job, policy_, 100));
  text = board.render({"ifs"});
  EXPECT_NE(text.find("protection +2d:1n, FULL"), std::string::npos) << text;
  EXPECT_NE(text.find("job idle; last run: reprotect"), std::string::npos) << text;
  EXPECT_NE(text.find("(100%)"), std::string::npos) << text;
  EXPECT_NE(text.find("nodes 3/4 alive"), std::string::npos) << text;

  // Three of the four nodes down: groups with more than M units there are LOST (for now).
  topo_.nodes[0].alive = false;
  topo_.nodes[1].alive = false;
  ProtectionJob frozen(JobConfig{}, 2, topo_);
  frozen.load(all);
  s = protection_status(frozen, policy_, 100);
  EXPECT_GT(s.groups_lost, 0u);
  EXPECT_NE(format_protection_status("ifs", s).find("LOST DATA"), std::string::npos);

  EXPECT_THROW(board.render({"nope"}), std::invalid_argument);
  EXPECT_THROW(board.render({"ifs", "extra"}), std::invalid_argument);
  EXPECT_THROW(board.render({std::string(256, 'x')}), std::invalid_argument);
}

// Cluster fsck: every group of the catalog verified; a flipped bit in one unit is found and
// named, the rest stays clean.
TEST_F(FourNodes, FsckOfTheCatalogFindsACorruptedUnit) {
  std::vector<GroupRecord> catalog;
  for (uint64_t id = 1; id <= 5; ++id) {
    File f = write_file(id, 1 + rng_() % (14 * kStripeUnit));
    catalog.insert(catalog.end(), f.groups.begin(), f.groups.end());
  }
  FsckReport clean = fsck_groups(io_, catalog);
  EXPECT_TRUE(clean.clean()) << format_fsck_report(clean);
  EXPECT_EQ(clean.groups, catalog.size());

  const GroupRecord victim = catalog[catalog.size() / 2];
  const UnitPlace at = victim.places[0];
  std::vector<uint8_t> bytes;
  ASSERT_EQ(units_.get(at, victim.key(0), &bytes), UnitStatus::Ok);
  // Find the unit's payload in its drive's log and flip one bit of it.
  const std::string path = dir_.path + "/node" + std::to_string(at.node) + "/drive-" +
                           std::to_string(at.drive) + ".units";
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> log(static_cast<size_t>(::lseek(fd, 0, SEEK_END)));
  ASSERT_EQ(::pread(fd, log.data(), log.size(), 0), static_cast<ssize_t>(log.size()));
  auto found = std::search(log.begin(), log.end(), bytes.begin(), bytes.end());
  ASSERT_NE(found, log.end());
  const off_t off = static_cast<off_t>(found - log.begin()) + static_cast<off_t>(bytes.size() / 2);
  uint8_t c = static_cast<uint8_t>(log[static_cast<size_t>(off)] ^ 0x10);
  ASSERT_EQ(::pwrite(fd, &c, 1, off), 1);
  ::close(fd);

  FsckReport r = fsck_groups(io_, catalog);
  EXPECT_FALSE(r.clean());
  EXPECT_EQ(r.groups_degraded, 1u);
  EXPECT_EQ(r.groups_unreadable, 0u);
  EXPECT_EQ(r.units_corrupt, 1u);
  EXPECT_EQ(r.groups_clean, catalog.size() - 1);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find("file " + std::to_string(victim.file)), std::string::npos)
      << r.problems[0];
  EXPECT_NE(r.problems[0].find("checksum: 0"), std::string::npos) << r.problems[0];
  EXPECT_NE(format_fsck_report(r).find("NOT CLEAN"), std::string::npos);
}

}  // namespace
}  // namespace nasd::scaleout

#include "cluster/scaleout/catalog_text.h"

namespace nasd::scaleout {
namespace {

TEST(CatalogText, RoundTripsAndRefusesWhatIsOutOfBounds) {
  GroupRecord r;
  r.file = 7;
  r.group = 3;
  r.version = (1ull << 40) | 5;
  r.offset = 3 * 6 * kStripeUnit;
  r.length = 6 * kStripeUnit;
  r.shape = GroupShape{6, 2, 2, false};
  for (uint32_t i = 0; i < 8; ++i) r.places.push_back(UnitPlace{1 + i % 4, i / 4});
  GroupRecord small = r;
  small.length = 700;
  small.shape = GroupShape{1, 2, 2, true};
  small.places.resize(3);
  std::vector<GroupRecord> out;
  std::string err;
  ASSERT_TRUE(decode_catalog(encode_catalog({r, small}), &out, &err)) << err;
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].places, r.places);
  EXPECT_EQ(out[0].version, r.version);
  EXPECT_TRUE(out[1].shape.under_protected);
  const std::string head = "nasd-scaleout-catalog 1\n";
  for (const std::string& bad : {
           std::string(""), std::string("hello\n"), head + "group 1 0 1 0 10 1 2 2 0 1:0 2:0\n",
           head + "group 1 0 1 0 0 1 2 2 0 1:0 2:0 3:0\n",               // empty group
           head + "group 1 0 1 0 131073 1 2 2 0 1:0 2:0 3:0\n",          // past N units
           head + "group 1 0 1 0 10 17 2 2 0 1:0\n",                     // N > 16
           head + "group 1 0 1 0 10 1 5 2 0 1:0 2:0 3:0 4:0 5:0 6:0\n",  // M > 4
           head + "group 1 0 1 0 10 1 2 2 0 1:0 2:0 3:64\n",             // drive 64
           head + "group 1 0 1 0 10 1 2 2 0 1:0 2:0 3:x\n",
           head + "group -1 0 1 0 10 1 2 2 0 1:0 2:0 3:0\n",
           head + "group 99999999999999999999 0 1 0 10 1 2 2 0 1:0 2:0 3:0\n",  // > 2^64
           head + "group 1 0 1 18446744073709551615 10 1 2 2 0 1:0 2:0 3:0\n",  // overflow
           head + "group 1 0 1 0 10 1 2 2 0 1:0 2:0 3:0",                // no newline
           head + std::string(5000, 'g') + "\n"}) {
    EXPECT_FALSE(decode_catalog(bad, &out, &err)) << bad;
    EXPECT_NE(err, "") << bad;
  }
}

// nasd-fsck --scaleout over the drives of four nodes: clean, then a flipped bit (exit 1), and
// a damaged catalog (exit 2).
TEST_F(FourNodes, NasdFsckScaleoutModeChecksTheDrives) {
  std::vector<GroupRecord> catalog;
  for (uint64_t id = 1; id <= 3; ++id) {
    File f = write_file(id, 1 + rng_() % (8 * kStripeUnit));
    catalog.insert(catalog.end(), f.groups.begin(), f.groups.end());
  }
  const std::string cat = dir_.path + "/catalog.txt";
  {
    std::ofstream o(cat);
    o << encode_catalog(catalog);
  }
  std::string cmd = std::string(NASD_FSCK_PATH) + " --scaleout " + cat + " --volume-id 77 --drives 4";
  for (int n = 1; n <= 4; ++n) cmd += " " + std::to_string(n) + "=" + dir_.path + "/node" + std::to_string(n);
  cmd += " > " + dir_.path + "/fsck.out 2>&1";
  EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 0);
  // Corrupt data unit 0 of the first group: one bit of its payload on its drive.
  const GroupRecord& g = catalog[0];
  std::vector<uint8_t> bytes;
  ASSERT_EQ(units_.get(g.places[0], g.key(0), &bytes), UnitStatus::Ok);
  const std::string path = dir_.path + "/node" + std::to_string(g.places[0].node) + "/drive-" +
                           std::to_string(g.places[0].drive) + ".units";
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  std::vector<uint8_t> log(static_cast<size_t>(::lseek(fd, 0, SEEK_END)));
  ASSERT_EQ(::pread(fd, log.data(), log.size(), 0), static_cast<ssize_t>(log.size()));
  auto found = std::search(log.begin(), log.end(), bytes.begin(), bytes.end());
  ASSERT_NE(found, log.end());
  const off_t off = static_cast<off_t>(found - log.begin()) + 100;
  uint8_t c = static_cast<uint8_t>(log[static_cast<size_t>(off)] ^ 1);
  ASSERT_EQ(::pwrite(fd, &c, 1, off), 1);
  ::close(fd);
  EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 1);
  std::ifstream report(dir_.path + "/fsck.out");
  std::string text((std::istreambuf_iterator<char>(report)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("checksum: 0"), std::string::npos) << text;
  EXPECT_NE(text.find("NOT CLEAN"), std::string::npos) << text;
  {
    std::ofstream o(cat, std::ios::app);
    o << "group 1 2 3\n";
  }
  EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 2);
}

}  // namespace
}  // namespace nasd::scaleout
