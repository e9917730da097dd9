// Snapshots end to end: `nasd-admin snapshot` on a real nasd, clients reading the old version
// through DIR/.snapshot/NAME/FILE (raw NFSv3 calls and libnfs paths), `.snapshot` hidden from
// READDIR, ROFS under it, kill -9 keeping it, delete making its handles stale, and the
// configured schedule taking and expiring snapshots. nasd only.
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/e2e/e2e_fixture.h"

namespace nasd::e2e {
namespace {

using namespace std::chrono_literals;

class SnapshotTest : public E2eTest {
 protected:
  void SetUp() override {
    NASD_E2E_NEEDS_OWN_SERVER("takes snapshots through the server's admin socket, kills and reconfigures it");
    E2eTest::SetUp();
    if (is_ganesha()) GTEST_SKIP() << "snapshots are nasd's (nasd-admin snapshot)";
    if (server().choice().admin_binary.empty()) GTEST_SKIP() << "no nasd-admin binary";
  }

  CommandResult admin(const std::vector<std::string>& words) {
    std::vector<std::string> argv{server().choice().admin_binary, "--socket",
                                  server().admin_socket().string()};
    argv.insert(argv.end(), words.begin(), words.end());
    return run_command(argv, 30s, scratch().path());
  }

  // NAME lines of `snapshot list v0` (after the two header lines).
  std::vector<std::string> listed() {
    CommandResult r = admin({"snapshot", "list", "v0"});
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::vector<std::string> names;
    std::istringstream in(r.output);
    std::string line;
    std::getline(in, line);
    std::getline(in, line);
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string name;
      if (words >> name) names.push_back(name);
    }
    return names;
  }

  std::vector<std::string> dir_names(const Fh& dir) {
    ReaddirReply r = nfs().readdir(dir, 0, 0, 8192);
    EXPECT_EQ(r.status, NFS3_OK) << st(r.status);
    std::vector<std::string> out;
    for (auto& e : r.entries) out.push_back(e.name);
    return out;
  }
};

TEST_F(SnapshotTest, OldVersionThroughSnapshotDirReadOnlyAndPersistent) {
  Fh dir = make_dir(root(), "dir");
  Fh file = make_file(dir, "file", "version one");
  make_file(dir, "doomed", "deleted after the snapshot");

  CommandResult c = admin({"snapshot", "create", "v0", "before"});
  ASSERT_EQ(c.exit_code, 0) << c.output;
  EXPECT_NE(admin({"snapshot", "create", "v0", "before"}).exit_code, 0) << "a name is taken once";

  ASSERT_EQ(nfs().write(file, 0, "VERSION TWO", FILE_SYNC).status, NFS3_OK);
  ASSERT_EQ(nfs().remove(dir, "doomed").status, NFS3_OK);

  // Raw calls: LOOKUP .snapshot, NAME, file.
  LookupReply sd = nfs().lookup(dir, ".snapshot");
  ASSERT_EQ(sd.status, NFS3_OK) << st(sd.status);
  Fh snap_file = nfs().resolve(dir, ".snapshot/before/file");
  EXPECT_EQ(nfs().read(snap_file, 0, 100).data, "version one");
  EXPECT_EQ(nfs().read(nfs().resolve(dir, ".snapshot/before/doomed"), 0, 100).data,
            "deleted after the snapshot");
  EXPECT_EQ(nfs().read(file, 0, 100).data, "VERSION TWO");
  EXPECT_NE(attrs_of(snap_file).fileid, attrs_of(file).fileid);

  // Hidden from READDIR of the parent, listed inside.
  for (const auto& n : dir_names(dir)) EXPECT_NE(n, ".snapshot");
  for (const auto& n : dir_names(root())) EXPECT_NE(n, ".snapshot");
  auto in_snapdir = dir_names(sd.fh);
  EXPECT_NE(std::find(in_snapdir.begin(), in_snapdir.end(), "before"), in_snapdir.end());

  // libnfs by path, as a client application would.
  auto client = libnfs_client();
  std::string data;
  ASSERT_EQ(client->read_file("/dir/.snapshot/before/file", &data), 0) << client->error();
  EXPECT_EQ(data, "version one");

  // Read-only.
  Fh snap_dir = nfs().resolve(dir, ".snapshot/before");
  EXPECT_EQ(nfs().write(snap_file, 0, "x", FILE_SYNC).status, NFS3ERR_ROFS);
  EXPECT_EQ(nfs().create(snap_dir, "new", UNCHECKED).status, NFS3ERR_ROFS);
  EXPECT_EQ(nfs().remove(snap_dir, "file").status, NFS3ERR_ROFS);
  EXPECT_EQ(nfs().setattr(snap_file, sattr_mode(0777)).status, NFS3ERR_ROFS);
  EXPECT_EQ(nfs().mkdir(sd.fh, "x").status, NFS3ERR_ROFS);
  EXPECT_NE(client->write_file("/dir/.snapshot/before/file", "overwrite"), 0);

  // kill -9: the snapshot and its handles survive.
  server().kill9();
  server().start();
  reconnect();
  EXPECT_EQ(nfs().read(snap_file, 0, 100).data, "version one") << "handle valid after restart";
  EXPECT_EQ(listed(), std::vector<std::string>{"before"});

  // Delete: its handles go stale, the name is gone.
  CommandResult d = admin({"snapshot", "delete", "v0", "before"});
  ASSERT_EQ(d.exit_code, 0) << d.output;
  EXPECT_EQ(nfs().read(snap_file, 0, 100).status, NFS3ERR_STALE);
  EXPECT_EQ(nfs().getattr(snap_dir).status, NFS3ERR_STALE);
  EXPECT_EQ(nfs().lookup(sd.fh, "before").status, NFS3ERR_NOENT);
  EXPECT_TRUE(listed().empty());
  EXPECT_NE(admin({"snapshot", "delete", "v0", "before"}).exit_code, 0);
}

TEST_F(SnapshotTest, ListShowsTimeAndExclusiveSpace) {
  Fh big = make_file(root(), "big");
  std::string mib(1 << 20, 'z');
  for (int i = 0; i < 4; i++) ASSERT_EQ(nfs().write(big, uint64_t(i) << 20, mib, FILE_SYNC).status, NFS3_OK);
  ASSERT_EQ(admin({"snapshot", "create", "v0", "s1"}).exit_code, 0);
  ASSERT_EQ(nfs().remove(root(), "big").status, NFS3_OK);
  CommandResult r = admin({"snapshot", "list", "v0"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream in(r.output);
  std::string line;
  std::getline(in, line);
  EXPECT_NE(line.find("1 snapshots"), std::string::npos) << r.output;
  std::getline(in, line);
  std::getline(in, line);
  std::istringstream words(line);
  std::string name, day, time;
  uint64_t exclusive = 0;
  words >> name >> day >> time >> exclusive;
  EXPECT_EQ(name, "s1");
  EXPECT_EQ(day.size(), 10u) << line;  // YYYY-MM-DD
  EXPECT_GE(exclusive, 4u << 20) << "the removed file's 4 MiB are held by s1 alone:\n" << r.output;
  CommandResult all = admin({"snapshot", "list"});  // every volume open on the node
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_EQ(all.output.rfind("volume v0: 1 snapshots", 0), 0u) << all.output;
  EXPECT_NE(all.output.find("\ns1 "), std::string::npos) << all.output;
}

TEST_F(SnapshotTest, ScheduleTakesAndExpiresSnapshots) {
  ASSERT_TRUE(server().stop()) << server().log_tail();
  std::filesystem::path conf = server().root() / "nasd.conf";
  std::string text;
  {
    std::ifstream in(conf);
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  auto at = text.find("[volume v0]\n");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 12, "snapshot_schedule = 1s:2\n");
  {
    std::ofstream out(conf);
    out << text;
  }
  server().start();
  reconnect();
  Fh f = make_file(root(), "ticking", "0");
  // Bounded: the 1 s rule keeps two, so after a few seconds exactly two exist and they change.
  std::vector<std::string> first, later;
  for (int i = 0; i < 100 && first.size() < 2; i++) {
    std::this_thread::sleep_for(100ms);
    first = listed();
  }
  ASSERT_EQ(first.size(), 2u);
  for (int i = 0; i < 100; i++) {
    std::this_thread::sleep_for(100ms);
    later = listed();
    if (later.size() == 2 && later != first && later[0] != first[0]) break;
  }
  EXPECT_EQ(later.size(), 2u) << "retention keeps two";
  EXPECT_NE(later[0], first[0]) << "the oldest was expired";
  for (const auto& n : later) EXPECT_EQ(n.rfind("every1s.", 0), 0u) << n;
  // Each is reachable by clients.
  LookupReply l = nfs().lookup(nfs().resolve(root(), ".snapshot"), later.back());
  EXPECT_EQ(l.status, NFS3_OK) << st(l.status);
  (void)f;
}

}  // namespace
}  // namespace nasd::e2e
