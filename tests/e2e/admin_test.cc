// nasd-admin's nfsstat-like view: after traffic, `nasd-admin --socket S stats` lists the NFS
// procedures that ran, with counts that grow by what was issued. nasd only.
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <sstream>

#include "tests/e2e/e2e_fixture.h"

namespace nasd::e2e {
namespace {

using namespace std::chrono_literals;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

constexpr uint32_t kNfsProgram = 100003;

// nasd-admin prints one section per RPC program, headed "NAME (program N) version V: ...",
// then one "  procedure calls ..." line per procedure. Returns program -> procedure (lower
// case) -> calls. Other lines (column headings, transport counters) are ignored.
std::map<uint32_t, std::map<std::string, uint64_t>> parse_stats(const std::string& text) {
  std::map<uint32_t, std::map<std::string, uint64_t>> out;
  std::optional<uint32_t> program;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (auto at = line.find("(program "); at != std::string::npos) {
      program = static_cast<uint32_t>(std::stoul(line.substr(at + 9)));
      continue;
    }
    if (line.empty() || !std::isspace(static_cast<unsigned char>(line[0]))) {
      program.reset();  // a new, non-program section such as "transport"
      continue;
    }
    std::istringstream words(line);
    std::string name, calls;
    if (!program || !(words >> name >> calls)) continue;
    if (std::all_of(calls.begin(), calls.end(), ::isdigit))
      out[*program][lower(name)] = std::stoull(calls);
  }
  return out;
}

class AdminStatsTest : public E2eTest {
 protected:
  // The NFS program's per-procedure counts.
  std::map<std::string, uint64_t> stats() {
    CommandResult r = run_command(
        {server().choice().admin_binary, "--socket", server().admin_socket().string(), "stats"},
        20s, scratch().path());
    EXPECT_EQ(r.exit_code, 0) << "nasd-admin stats: " << r.output;
    last_output_ = r.output;
    return parse_stats(r.output)[kNfsProgram];
  }
  std::string last_output_;
};

TEST_F(AdminStatsTest, StatsCountTheProceduresThatRan) {
  NASD_E2E_NEEDS_OWN_SERVER("reads the server's admin socket");
  if (is_ganesha()) GTEST_SKIP() << "nasd-admin is nasd's tool; ganesha has no such socket";
  if (server().choice().admin_binary.empty())
    GTEST_SKIP() << "no nasd-admin binary (build target `nasd-admin` or set NASD_ADMIN_BIN)";

  Fh f = make_file(root(), "counted", "data");  // CREATE + WRITE
  nfs().getattr(f);
  nfs().read(f, 0, 10);
  nfs().lookup(root(), "counted");
  nfs().readdir(root(), 0, 0, 4096);
  nfs().fsinfo(root());
  auto before = stats();
  for (const char* proc : {"getattr", "lookup", "create", "write", "read", "readdir", "fsinfo"})
    EXPECT_GT(before[proc], 0u) << proc << " missing or zero in:\n" << last_output_;
  EXPECT_EQ(before["mknod"], 0u) << "MKNOD never ran";

  constexpr int kGetattrs = 7;
  for (int i = 0; i < kGetattrs; ++i) ASSERT_EQ(nfs().getattr(f).status, NFS3_OK);
  auto after = stats();
  EXPECT_GE(after["getattr"], before["getattr"] + kGetattrs)
      << "GETATTR count did not grow by the calls issued:\n" << last_output_;
  EXPECT_EQ(after["write"], before["write"]) << "no WRITE happened in between";
}

}  // namespace
}  // namespace nasd::e2e
