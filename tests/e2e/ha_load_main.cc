// nasd-ha-load: one client of a failover test. It runs the acknowledged-operations load of
// AckedLoad in retry mode against one node's address for a fixed time, riding out the node's
// crash and the takeover by its partner (and the failback), then reads the directory back at
// the verify address and prints one summary line:
//   ha-load /r/v0/NAME: acknowledged=1234 retried=5 retried_as_done=1 ... verify=OK
// followed by one line per discrepancy. Exit 0 when verify passed, the load was never left
// without an answer for longer than the retry budget, and at least one call was acknowledged.
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "tests/e2e/acked_load.h"
#include "tests/e2e/ha_load_args.h"
#include "tests/e2e/ha_verify.h"
#include "tests/e2e/mount3_client.h"
#include "tests/e2e/retrying_session.h"

namespace nasd::e2e {
namespace {

// Mounts the export and makes the load's directory; the load must start on a served node.
// Retried within the retry budget, as the load's own calls are: a drill may move the node's
// address while a slow client is still setting up.
Fh make_load_dir(const HaLoadArgs& a) {
  RetryingSession s({a.host, a.nfs_port, a.mount_port, a.export_path,
                     std::chrono::seconds(a.retry_budget_s),
                     std::chrono::milliseconds(a.call_timeout_ms)});
  return s.make_dir(a.dir);
}

int run(const HaLoadArgs& a) {
  Fh dir = make_load_dir(a);
  AckedLoadOptions options;
  options.host = a.host;
  options.retry = true;
  options.call_timeout = std::chrono::milliseconds(a.call_timeout_ms);
  options.retry_budget = std::chrono::seconds(a.retry_budget_s);
  AckedLoad load(a.nfs_port, dir, options);
  load.start();
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(a.seconds);
  const auto told_to_end = [&] {
    std::error_code ignored;
    return !a.until_file.empty() && std::filesystem::exists(a.until_file, ignored);
  };
  while (std::chrono::steady_clock::now() < end && load.stopped_by().empty() && !told_to_end())
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  load.stop();  // a call being retried now is finished first (bounded by the budget)
  if (!a.verify_after.empty()) {
    std::cout << "ha-load " << a.export_path << "/" << a.dir << ": load ended ("
              << load.stopped_by() << "), reading back once " << a.verify_after << " exists\n"
              << std::flush;
    const auto limit = std::chrono::steady_clock::now() + std::chrono::minutes(5);
    std::error_code ignored;
    while (!std::filesystem::exists(a.verify_after, ignored) && std::chrono::steady_clock::now() < limit)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  HaVerifyTarget target{a.verify_host, a.verify_nfs_port, a.verify_mount_port, a.export_path,
                        a.dir};
  std::vector<std::string> problems =
      verify_after_failover(load, dir, target, std::chrono::seconds(a.retry_budget_s));
  AckedLoadStats st = load.stats();
  std::string end_reason = load.stopped_by();
  bool ok = problems.empty() && end_reason == "stopped" && st.acknowledged > 0;

  std::vector<std::pair<std::string, std::string>> kv = {
      {"export", a.export_path},
      {"dir", a.dir},
      {"acknowledged", std::to_string(st.acknowledged)},
      {"retried", std::to_string(st.retried)},
      {"retried_as_done", std::to_string(st.retried_as_done)},
      {"reconnects", std::to_string(st.reconnects)},
      {"jukebox", std::to_string(st.jukebox)},
      {"longest_stall_ms", std::to_string(st.longest_stall_ms)},
      {"acknowledged_since_retry", std::to_string(st.acknowledged_since_retry)},
      {"verify", problems.empty() ? "OK" : "FAILED"},
      {"discrepancies", std::to_string(problems.size())},
      {"result", ok ? "PASS" : "FAIL"},
  };
  std::ostringstream line;
  line << "ha-load " << a.export_path << "/" << a.dir << ":";
  for (size_t i = 2; i < kv.size(); ++i) line << " " << kv[i].first << "=" << kv[i].second;
  std::cout << line.str() << "\n";
  if (end_reason != "stopped") std::cout << "  load ended early: " << end_reason << "\n";
  for (const std::string& p : problems) std::cout << "  discrepancy: " << p << "\n";
  std::cout.flush();

  if (!a.report.empty()) {
    std::ofstream out(a.report);
    for (const auto& [k, v] : kv) out << k << "=" << v << "\n";
    out << "load_end=" << end_reason << "\n";
    for (const std::string& p : problems) out << "discrepancy=" << p << "\n";
    if (!out) {
      std::cerr << "nasd-ha-load: cannot write " << a.report << "\n";
      return 1;
    }
  }
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace nasd::e2e

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);  // a node that dies mid-send is an error to retry, not our end
  std::string error;
  auto args = nasd::e2e::parse_ha_load_args(argc, argv, &error);
  if (!args) {
    bool help = error == "help";
    (help ? std::cout : std::cerr) << (help ? "" : "nasd-ha-load: " + error + "\n")
                                   << nasd::e2e::kHaLoadUsage;
    return help ? 0 : 2;
  }
  try {
    return nasd::e2e::run(*args);
  } catch (const std::exception& e) {  // before the load ran: no mount, no directory
    std::cout << "ha-load " << args->export_path << "/" << args->dir << ": FAIL: " << e.what()
              << "\n";
    if (!args->report.empty())
      std::ofstream(args->report) << "result=FAIL\nload_end=" << e.what() << "\n";
    return 1;
  }
}
