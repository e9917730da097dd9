// A real crash: a child process serves a mixed load through a JournalVolume, reporting every
// acknowledged operation over a pipe, and is killed with SIGKILL mid-flight. The parent reopens
// the region and the file system's durable state, replays, and finds every acknowledged
// operation there.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <poll.h>
#include <set>
#include <sstream>
#include <thread>

#include "nvram/journal_volume.h"
#include "tests/nvram/backing.h"
#include "tests/nvram/test_util.h"

namespace nasd::nvram {
namespace {

using fs::Status;

constexpr int kThreads = 4;
constexpr int kBlocks = 4;
constexpr uint32_t kMode = 0600;

std::string file_name(int t, int i) { return "t" + std::to_string(t) + "_f" + std::to_string(i); }
std::string dir_name(int t, int i) { return "t" + std::to_string(t) + "_d" + std::to_string(i); }
uint64_t block_seed(int t, int i, int b) { return (uint64_t(t) << 40) | (uint64_t(i) << 8) | b; }
bool script_removes(int i) { return i % 3 == 0; }

JournalOptions crash_options(const std::string& region) {
  auto o = testing::small_options(region, 1 << 20);
  // Write-behind runs all the time, so the kill lands amid flushes and trims as well.
  o.flush_threshold_pct = 30;
  o.flush_interval = std::chrono::milliseconds(20);
  return o;
}

// One thread of the child's load: per file CREATE, 4 stable WRITEs, SETATTR, sometimes
// REMOVE, sometimes MKDIR; each acknowledged step becomes one line on the pipe.
void child_load(JournalVolume& v, int t, int ack_fd) {
  fs::OpContext ctx;
  ctx.cred.uid = 0;
  ctx.cred.gid = 0;
  auto ack = [&](const std::string& line) {
    std::string l = line + "\n";
    if (::write(ack_fd, l.data(), l.size()) < 0) _exit(3);
  };
  for (int i = 0; i < 100000; ++i) {
    fs::InodeId f;
    std::optional<fs::Attr> a;
    fs::Wcc w;
    if (v.create(ctx, v.root(), file_name(t, i), fs::CreateMode::Guarded, {}, 0, &f, &a, &w) !=
        Status::Ok)
      _exit(4);
    ack("C " + std::to_string(t) + " " + std::to_string(i) + " " + std::to_string(f.ino) + " " +
        std::to_string(f.gen));
    for (int b = 0; b < kBlocks; ++b) {
      fs::Stability c;
      auto data = testing::pattern(block_seed(t, i, b), 4096);
      if (v.write(ctx, f, uint64_t(b) * 4096, data, fs::Stability::FileSync, &c, &w) != Status::Ok)
        _exit(5);
      ack("W " + std::to_string(t) + " " + std::to_string(i) + " " + std::to_string(b));
    }
    fs::SetAttr sa;
    sa.mode = kMode;
    if (v.setattr(ctx, f, sa, std::nullopt, &w) != Status::Ok) _exit(6);
    ack("S " + std::to_string(t) + " " + std::to_string(i));
    if (script_removes(i)) {
      if (v.remove(ctx, v.root(), file_name(t, i), &w) != Status::Ok) _exit(7);
      ack("R " + std::to_string(t) + " " + std::to_string(i));
    }
    if (i % 5 == 0) {
      fs::InodeId d;
      if (v.mkdir(ctx, v.root(), dir_name(t, i), {}, &d, &a, &w) != Status::Ok) _exit(8);
      ack("D " + std::to_string(t) + " " + std::to_string(i));
    }
  }
}

[[noreturn]] void run_child(testing::Backing kind, const std::string& dir, int ack_fd) {
  auto journal = Journal::open(crash_options(dir + "/nvram.img"));
  auto target = testing::open_backing(kind, dir, 1);
  JournalVolume volume(journal, target);
  volume.recover();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([&, t] { child_load(volume, t, ack_fd); });
  for (auto& th : threads) th.join();
  _exit(0);
}

struct FileAcks {
  bool created = false, attr_set = false, removed = false;
  fs::InodeId id;
  std::set<int> blocks;
};

class CrashTest : public ::testing::TestWithParam<testing::Backing> {};

TEST_P(CrashTest, EveryAcknowledgedOperationSurvivesSigkill) {
  testing::ScratchDir dir;
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    run_child(GetParam(), dir.path(), fds[1]);
  }
  close(fds[1]);

  // Let it run until a good number of acknowledgements arrived, then kill it mid-flight.
  std::string acks;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  size_t lines = 0;
  while (lines < 3000 && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    acks.append(buf, static_cast<size_t>(n));
    lines = static_cast<size_t>(std::count(acks.begin(), acks.end(), '\n'));
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child stopped on its own, status " << status;
  for (;;) {  // acknowledgements already in the pipe when it died
    char buf[4096];
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    acks.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  acks.erase(acks.find_last_of('\n') + 1);  // a torn last line is no acknowledgement

  std::map<std::pair<int, int>, FileAcks> files;
  std::set<std::pair<int, int>> dirs;
  std::istringstream in(acks);
  std::string kind;
  int t, i;
  size_t total = 0;
  while (in >> kind >> t >> i) {
    ++total;
    FileAcks& f = files[{t, i}];
    if (kind == "C") {
      f.created = true;
      in >> f.id.ino >> f.id.gen;
    } else if (kind == "W") {
      int b;
      in >> b;
      f.blocks.insert(b);
    } else if (kind == "S") {
      f.attr_set = true;
    } else if (kind == "R") {
      f.removed = true;
    } else if (kind == "D") {
      dirs.insert({t, i});
    }
  }
  ASSERT_GT(total, 200u) << "the load did too little to test anything";

  auto journal = Journal::open(crash_options(dir.file("nvram.img")));
  auto target = testing::open_backing(GetParam(), dir.path(), 1);
  JournalVolume volume(journal, target);
  ReplayReport rep = volume.recover();
  EXPECT_EQ(rep.failed, 0u);

  fs::OpContext ctx;
  ctx.cred.uid = ctx.cred.gid = 0;
  size_t verified = 0;
  for (const auto& [key, f] : files) {
    if (!f.created) continue;
    const std::string name = file_name(key.first, key.second);
    fs::InodeId id;
    std::optional<fs::Attr> attr, dir_attr;
    Status st = volume.lookup(ctx, volume.root(), name, &id, &attr, &dir_attr);
    if (f.removed) {
      EXPECT_EQ(st, Status::NoEnt) << name << " was removed";
      ++verified;
      continue;
    }
    if (st == Status::NoEnt && script_removes(key.second) && f.attr_set) continue;  // in flight
    ASSERT_EQ(st, Status::Ok) << name << " was acknowledged as created";
    EXPECT_EQ(id, f.id) << name;
    for (int b : f.blocks) {
      std::vector<uint8_t> data;
      bool eof;
      std::optional<fs::Attr> ra;
      ASSERT_EQ(volume.read(ctx, id, uint64_t(b) * 4096, 4096, &data, &eof, &ra), Status::Ok);
      EXPECT_EQ(data, testing::pattern(block_seed(key.first, key.second, b), 4096))
          << name << " block " << b;
      ++verified;
    }
    if (f.attr_set) {
      EXPECT_EQ(attr->mode, kMode) << name;
    }
    ++verified;
  }
  for (const auto& [dt, di] : dirs) {
    fs::InodeId id;
    std::optional<fs::Attr> attr, dir_attr;
    ASSERT_EQ(volume.lookup(ctx, volume.root(), dir_name(dt, di), &id, &attr, &dir_attr),
              Status::Ok);
    EXPECT_EQ(attr->type, fs::FileType::Dir);
    ++verified;
  }
  EXPECT_GT(verified, 100u);
  std::printf("crash test (%s): %zu acknowledgements, %zu checks, replayed %llu records (%llu already "
              "durable)\n",
              testing::backing_name(GetParam()), total, verified, static_cast<unsigned long long>(rep.applied),
              static_cast<unsigned long long>(rep.skipped));
}

INSTANTIATE_TEST_SUITE_P(Backings, CrashTest, ::testing::ValuesIn(testing::available_backings()),
                         [](const auto& info) { return testing::backing_name(info.param); });

}  // namespace
}  // namespace nasd::nvram
