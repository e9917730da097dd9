// What a restart and a crash must preserve: handles stay valid across a clean restart, and
// after kill -9 every FILE_SYNC write and every namespace change the server acknowledged is
// still there.
#include <thread>

#include "tests/e2e/acked_load.h"
#include "tests/e2e/e2e_fixture.h"

namespace nasd::e2e {
namespace {

using PersistenceTest = E2eTest;

TEST_F(PersistenceTest, HandlesSurviveACleanRestart) {
  NASD_E2E_NEEDS_OWN_SERVER("restarts the server");
  Fh dir = make_dir(root(), "d");
  Fh file = make_file(dir, "f", "kept across restarts");
  NewObjectReply link = nfs().symlink(root(), "l", "d/f");
  ASSERT_EQ(link.status, NFS3_OK);
  fattr3 before = attrs_of(file);
  Fh old_root = root();

  restart_server();

  EXPECT_EQ(root(), old_root) << "MNT gives the same root handle after a restart";
  EXPECT_EQ(attrs_of(dir).type, NF3DIR);
  fattr3 after = attrs_of(file);
  EXPECT_EQ(after.fileid, before.fileid);
  EXPECT_EQ(after.size, before.size);
  EXPECT_EQ(nfs().read(file, 0, 100).data, "kept across restarts");
  EXPECT_EQ(nfs().readlink(*link.fh).target, "d/f");
  EXPECT_EQ(nfs().lookup(dir, "f").fh, file);
}

TEST_F(PersistenceTest, StopsCleanlyAndStartsAgain) {
  NASD_E2E_NEEDS_OWN_SERVER("stops and starts the server");
  make_file(root(), "x", "y");
  ASSERT_TRUE(server().stop()) << "SIGTERM must give exit 0, got " << server().last_exit()
                               << "\n" << server().log_tail();
  server().start();
  reconnect();
  EXPECT_EQ(nfs().read(nfs().resolve(root(), "x"), 0, 10).data, "y");
}

TEST_F(PersistenceTest, AcknowledgedWorkSurvivesKill9) {
  NASD_E2E_NEEDS_OWN_SERVER("kills the server with kill -9");
  Fh dir = make_dir(root(), "load");
  AckedLoad load(server().nfs_port(), dir);
  load.start();

  // Let the load run a while (bounded), then crash the server under it.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(4);
  while (std::chrono::steady_clock::now() < deadline && load.acknowledged() < 600 &&
         load.stopped_by().empty())
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  server().kill9();
  load.stop();
  RecordProperty("acknowledged_ops", load.acknowledged());
  ASSERT_GE(load.acknowledged(), 30) << "too little load to mean anything; it ended with: "
                                     << load.stopped_by();
  EXPECT_NE(load.stopped_by(), "stopped") << "the kill should have interrupted the load";

  server().start();
  reconnect();
  for (const std::string& problem : load.verify(nfs(), nfs().resolve(root(), "load")))
    ADD_FAILURE() << problem;
}

// Large WRITEs whose pages the volume kept as its cache blocks without a copy (the zero-copy
// path: record received in a page run, journalled, adopted) are read back whole, before and
// after kill -9: what the cache kept is the client's data, and the journal holds its own copy.
TEST_F(PersistenceTest, LargeWritesKeptWithoutACopySurviveKill9) {
  NASD_E2E_NEEDS_OWN_SERVER("kills the server with kill -9 and reads its admin socket");
  if (is_ganesha()) GTEST_SKIP() << "nasd's own write path";
  if (server().choice().admin_binary.empty())
    GTEST_SKIP() << "no nasd-admin binary (build target `nasd-admin` or set NASD_ADMIN_BIN)";
  Fh file = make_file(root(), "big");
  constexpr size_t kChunk = 1u << 20;
  const std::string data = pattern(8 * kChunk, 12345);
  for (size_t off = 0; off < data.size(); off += kChunk) {
    WRITE3res w = nfs().write(file, off, data.substr(off, kChunk),
                              off == 0 ? FILE_SYNC : UNSTABLE);
    ASSERT_EQ(w.status, NFS3_OK) << "WRITE at " << off;
  }
  ASSERT_EQ(nfs().commit(file, 0, 0).status, NFS3_OK);

  CommandResult r = run_command(
      {server().choice().admin_binary, "--socket", server().admin_socket().string(), "volumes"},
      std::chrono::seconds(20), scratch().path());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const size_t at = r.output.find(" pages of WRITEs kept without a copy");
  ASSERT_NE(at, std::string::npos) << r.output;
  const size_t from = r.output.rfind(' ', at - 1) + 1;
  const uint64_t adopted = std::stoull(r.output.substr(from, at - from));
  RecordProperty("adopted_pages", static_cast<int>(adopted));
  EXPECT_GE(adopted, 8u * 256u) << "the WRITEs were copied: " << r.output;

  auto read_all = [&] {
    std::string back;
    for (size_t off = 0; off < data.size(); off += kChunk)
      back += nfs().read(file, off, kChunk).data;
    return back;
  };
  EXPECT_TRUE(read_all() == data) << "read back differs before the crash";
  server().kill9();
  server().start();
  reconnect();
  EXPECT_TRUE(read_all() == data) << "read back differs after kill -9";
}

}  // namespace
}  // namespace nasd::e2e
