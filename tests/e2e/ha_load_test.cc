// The client side of the failover test, proven against one node: the retrying load (in
// process, and as the nasd-ha-load tool the failover script runs) rides out a kill -9 and a
// restart of the server on the same ports, goes on with the same handles, and afterwards
// everything it was told had happened is there, and nothing else.
#include <fstream>
#include <map>
#include <thread>

#include "tests/e2e/acked_load.h"
#include "tests/e2e/e2e_fixture.h"
#include "tests/e2e/ha_verify.h"

#ifndef NASD_HA_LOAD_BIN
#define NASD_HA_LOAD_BIN ""
#endif

namespace nasd::e2e {
namespace {

using HaLoadTest = E2eTest;
using Clock = std::chrono::steady_clock;
constexpr auto kOutage = std::chrono::seconds(1);

// Waits (bounded) until `done()`; false at the deadline.
template <class Pred>
bool wait_for(Pred done, std::chrono::milliseconds limit) {
  auto deadline = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

std::map<std::string, std::string> read_report(const std::filesystem::path& p) {
  std::map<std::string, std::string> kv;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return kv;
}

int number(const std::map<std::string, std::string>& kv, const std::string& key) {
  auto it = kv.find(key);
  return it == kv.end() ? -1 : std::stoi(it->second);
}

TEST_F(HaLoadTest, RetryingLoadRidesOutKill9AndRestart) {
  NASD_E2E_NEEDS_OWN_SERVER("kills and restarts the server");
  Fh dir = make_dir(root(), "ha");
  AckedLoadOptions options;
  options.retry = true;
  options.call_timeout = std::chrono::seconds(2);
  options.retry_budget = std::chrono::seconds(20);
  AckedLoad load(server().nfs_port(), dir, options);
  load.start();
  wait_for([&] { return load.acknowledged() >= 300 || !load.stopped_by().empty(); },
           std::chrono::seconds(3));
  ASSERT_TRUE(load.stopped_by().empty()) << "the load ended before the crash: "
                                         << load.stopped_by();

  server().kill9();
  int at_kill = load.acknowledged();
  std::this_thread::sleep_for(kOutage);
  // A reply the server sent just before it died can still be read: at most that one.
  EXPECT_LE(load.acknowledged(), at_kill + 1) << "acknowledged while no server was running";
  EXPECT_TRUE(load.stopped_by().empty()) << "the outage ended the load: " << load.stopped_by();

  server().start();
  int at_restart = load.acknowledged();
  bool resumed = wait_for([&] { return load.acknowledged() >= at_restart + 200 ||
                                       !load.stopped_by().empty(); },
                          std::chrono::seconds(10));
  load.stop();
  AckedLoadStats st = load.stats();
  RecordProperty("acknowledged_ops", st.acknowledged);
  RecordProperty("longest_stall_ms", static_cast<int>(st.longest_stall_ms));
  EXPECT_EQ(load.stopped_by(), "stopped");
  EXPECT_TRUE(resumed && st.acknowledged >= at_restart + 200)
      << "acknowledged " << at_restart << " at the restart, " << st.acknowledged << " at the end";
  EXPECT_GE(at_kill, 30) << "too little load before the crash to mean anything";
  EXPECT_GE(st.retried, 1);
  EXPECT_GE(st.reconnects, 1);
  EXPECT_LE(st.retried_as_done, st.retried);
  EXPECT_GE(st.longest_stall_ms, 1000) << "the stall must span the outage";

  reconnect();
  HaVerifyTarget target{"127.0.0.1", server().nfs_port(), server().mount_port(), kExportPath, "ha"};
  for (const std::string& problem :
       verify_after_failover(load, dir, target, std::chrono::seconds(10)))
    ADD_FAILURE() << problem;
}

// However long the load runs, its directory holds about live_steps steps' objects: a fast
// server must not fill a test's volume (CI once ended a failover test with NFS3ERR_NOSPC).
TEST_F(HaLoadTest, LoadRemovesWhatItMadeLongAgo) {
  Fh dir = make_dir(root(), "bounded");
  AckedLoadOptions options;
  options.live_steps = 100;  // about 2.8 calls per step, 1.2 objects left per step
  options.host = host();
  AckedLoad load(nfs_port(), dir, options);
  load.start();
  ASSERT_TRUE(wait_for([&] { return load.acknowledged() >= 1500 || !load.stopped_by().empty(); },
                       std::chrono::seconds(60)))
      << "the load made too little progress";
  load.stop();
  ASSERT_EQ(load.stopped_by(), "stopped");
  for (const std::string& problem : load.verify(nfs(), dir)) ADD_FAILURE() << problem;

  size_t entries = 0;
  uint64_t cookie = 0, verf = 0;
  for (int calls = 0; calls < 100; ++calls) {
    ReaddirReply r = nfs().readdir(dir, cookie, verf, 8192);
    ASSERT_EQ(r.status, NFS3_OK);
    verf = r.cookieverf;
    for (const DirEntry& e : r.entries) {
      cookie = e.cookie;
      if (e.name != "." && e.name != "..") ++entries;
    }
    if (r.eof) break;
  }
  // 1,500 calls are over 400 steps; without the removals about 450 objects would be left.
  EXPECT_LE(entries, 150u) << "the load keeps what it made long ago";
}

TEST_F(HaLoadTest, ToolRidesOutKill9AndRestart) {
  NASD_E2E_NEEDS_OWN_SERVER("kills and restarts the server");
  const std::string tool = NASD_HA_LOAD_BIN;
  ASSERT_FALSE(tool.empty()) << "this build has no nasd-ha-load target";
  std::filesystem::path report = scratch().path() / "ha-load.report";
  std::filesystem::path log = scratch().path() / "ha-load.log";
  ChildProcess child = ChildProcess::spawn(
      {tool, "--nfs-port", std::to_string(server().nfs_port()), "--mount-port",
       std::to_string(server().mount_port()), "--export", kExportPath, "--dir", "tool",
       "--seconds", "8", "--call-timeout-ms", "2000", "--retry-budget-s", "20", "--report",
       report.string()},
      log);
  // Crash the server once the tool is well under way, and bring it back a second later.
  ASSERT_TRUE(wait_for([&] { return nfs().lookup(root(), "tool").status == NFS3_OK; },
                       std::chrono::seconds(5)))
      << "the tool made no directory:\n" << file_tail(log, 2000);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  server().kill9();
  std::this_thread::sleep_for(kOutage);
  server().start();
  reconnect();

  ASSERT_TRUE(child.wait_for_exit(std::chrono::seconds(40))) << "the tool did not finish";
  std::string out = file_tail(log, 4000);
  EXPECT_TRUE(child.exited_cleanly()) << child.describe_status() << "\n" << out;
  auto kv = read_report(report);
  RecordProperty("acknowledged_ops", number(kv, "acknowledged"));
  EXPECT_EQ(kv["result"], "PASS") << out;
  EXPECT_EQ(kv["verify"], "OK") << out;
  EXPECT_EQ(kv["load_end"], "stopped") << out;
  EXPECT_GE(number(kv, "retried"), 1) << out;
  EXPECT_GE(number(kv, "acknowledged_since_retry"), 10) << "the load did not resume:\n" << out;
  EXPECT_GE(number(kv, "longest_stall_ms"), 1000) << out;
  EXPECT_NE(out.find("ha-load /r/v0/tool: acknowledged="), std::string::npos) << out;
}

}  // namespace
}  // namespace nasd::e2e
