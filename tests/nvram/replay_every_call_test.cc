// Every mutating procedure replays from the journal after a SIGKILL, through the one call
// dispatch, exactly once, with the inode and generation the client was told: a child process
// runs one of each (WRITE, SETATTR of mode and of size, CREATE, MKDIR, SYMLINK, MKNOD, REMOVE,
// RMDIR, RENAME, LINK) through a JournalVolume whose write-behind never runs, reports what each
// answered, and is killed. The parent reopens region and file system, replays, and checks the
// volume call by call.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <map>
#include <poll.h>
#include <sstream>
#include <thread>

#include "nvram/journal_volume.h"
#include "tests/nvram/backing.h"
#include "tests/nvram/test_util.h"

namespace nasd::nvram {
namespace {

using fs::Status;

fs::OpContext root() {
  fs::OpContext ctx;
  ctx.cred.uid = ctx.cred.gid = 0;
  return ctx;
}

// Everything the client was told, as "name ino gen" lines.
void report(int fd, const std::string& name, fs::InodeId id) {
  std::string l = name + " " + std::to_string(id.ino) + " " + std::to_string(id.gen) + "\n";
  if (::write(fd, l.data(), l.size()) < 0) _exit(3);
}

[[noreturn]] void run_child(testing::Backing kind, const std::string& dir, int fd) {
  auto journal = Journal::open(testing::small_options(dir + "/nvram.img", 4 << 20));
  auto target = testing::open_backing(kind, dir, 1);
  JournalVolume v(journal, target);
  v.recover();
  const fs::OpContext ctx = root();
  const fs::InodeId r = v.root();
  fs::InodeId id;
  std::optional<fs::Attr> a;
  fs::Wcc w, w2;
  fs::Stability c;
  auto must = [](Status st, int code) {
    if (st != Status::Ok) _exit(code);
  };
  // A file written, truncated by SETATTR of size and given a mode; a second file removed.
  must(v.create(ctx, r, "file", fs::CreateMode::Guarded, {}, 0, &id, &a, &w), 10);
  report(fd, "file", id);
  const fs::InodeId file = id;
  auto data = testing::pattern(7, 3 * 4096);
  must(v.write(ctx, file, 0, data, fs::Stability::FileSync, &c, &w), 11);
  fs::SetAttr size;
  size.size = 5000;
  must(v.setattr(ctx, file, size, std::nullopt, &w), 12);
  fs::SetAttr mode;
  mode.mode = 0604;
  must(v.setattr(ctx, file, mode, std::nullopt, &w), 13);
  must(v.create(ctx, r, "gone", fs::CreateMode::Unchecked, {}, 0, &id, &a, &w), 14);
  report(fd, "gone", id);
  must(v.remove(ctx, r, "gone", &w), 15);
  // Exclusive CREATE, MKDIR (kept and removed), SYMLINK, MKNOD, LINK, RENAME.
  must(v.create(ctx, r, "excl", fs::CreateMode::Exclusive, {}, 0xfeed, &id, &a, &w), 16);
  report(fd, "excl", id);
  must(v.mkdir(ctx, r, "dir", {}, &id, &a, &w), 17);
  report(fd, "dir", id);
  const fs::InodeId dir_id = id;
  must(v.mkdir(ctx, r, "rmd", {}, &id, &a, &w), 18);
  must(v.rmdir(ctx, r, "rmd", &w), 19);
  must(v.symlink(ctx, dir_id, "sym", "../file", {}, &id, &a, &w), 20);
  report(fd, "sym", id);
  must(v.mknod(ctx, dir_id, "chr", fs::FileType::Chr, {}, 8, 1, &id, &a, &w), 21);
  report(fd, "chr", id);
  must(v.mknod(ctx, r, "fifo", fs::FileType::Fifo, {}, 0, 0, &id, &a, &w), 22);
  report(fd, "fifo", id);
  must(v.link(ctx, file, dir_id, "hard", &a, &w), 23);
  must(v.rename(ctx, r, "fifo", dir_id, "fifo2", &w, &w2), 24);
  // An object made after a removal: its inode number may be a reused one with a new generation.
  must(v.create(ctx, r, "late", fs::CreateMode::Guarded, {}, 0, &id, &a, &w), 25);
  report(fd, "late", id);
  if (::write(fd, "done\n", 5) < 0) _exit(3);
  for (;;) pause();  // killed here, with everything only in NVRAM and the fs's memory
}

class ReplayEveryCall : public ::testing::TestWithParam<testing::Backing> {};

TEST_P(ReplayEveryCall, AfterSigkillEachMutationIsReplayedOnceWithTheInodeTheClientWasGiven) {
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
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (out.find("done\n") == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  close(fds[0]);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child failed with status " << WEXITSTATUS(status);
  ASSERT_NE(out.find("done\n"), std::string::npos) << out;
  std::map<std::string, fs::InodeId> told;
  std::istringstream in(out);
  for (std::string name; in >> name && name != "done";) in >> told[name].ino >> told[name].gen;

  auto journal = Journal::open(testing::small_options(dir.file("nvram.img"), 4 << 20));
  auto target = testing::open_backing(GetParam(), dir.path(), 1);
  auto volume = std::make_unique<JournalVolume>(journal, target);
  JournalVolume& v = *volume;
  ReplayReport rep = v.recover();
  EXPECT_EQ(rep.failed, 0u);
  EXPECT_EQ(rep.applied + rep.skipped, 16u) << "one record per acknowledged mutation";
  EXPECT_GT(rep.applied, 0u) << "nothing was replayed: the test tests nothing";

  const fs::OpContext ctx = root();
  const fs::InodeId r = v.root();
  auto lookup = [&](fs::InodeId d, const std::string& name, fs::InodeId* id,
                    std::optional<fs::Attr>* attr) {
    std::optional<fs::Attr> da;
    return v.lookup(ctx, d, name, id, attr, &da);
  };
  fs::InodeId id;
  std::optional<fs::Attr> a;
  ASSERT_EQ(lookup(r, "file", &id, &a), Status::Ok);
  EXPECT_EQ(id, told["file"]);
  EXPECT_EQ(a->size, 5000u);       // WRITE of 12 KiB, then SETATTR of size
  EXPECT_EQ(a->mode, 0604u);       // SETATTR of mode
  EXPECT_EQ(a->nlink, 2u);         // LINK
  std::vector<uint8_t> got;
  bool eof = false;
  ASSERT_EQ(v.read(ctx, id, 0, 8192, &got, &eof, &a), Status::Ok);
  auto data = testing::pattern(7, 3 * 4096);
  EXPECT_EQ(got, std::vector<uint8_t>(data.begin(), data.begin() + 5000));
  EXPECT_EQ(lookup(r, "gone", &id, &a), Status::NoEnt);  // CREATE then REMOVE
  ASSERT_EQ(lookup(r, "excl", &id, &a), Status::Ok);
  EXPECT_EQ(id, told["excl"]);
  ASSERT_EQ(lookup(r, "dir", &id, &a), Status::Ok);
  EXPECT_EQ(id, told["dir"]);
  EXPECT_EQ(a->type, fs::FileType::Dir);
  const fs::InodeId dir_id = id;
  EXPECT_EQ(lookup(r, "rmd", &id, &a), Status::NoEnt);  // MKDIR then RMDIR
  ASSERT_EQ(lookup(dir_id, "sym", &id, &a), Status::Ok);
  EXPECT_EQ(id, told["sym"]);
  std::string link_target;
  ASSERT_EQ(v.readlink(ctx, id, &link_target, &a), Status::Ok);
  EXPECT_EQ(link_target, "../file");
  ASSERT_EQ(lookup(dir_id, "chr", &id, &a), Status::Ok);
  EXPECT_EQ(id, told["chr"]);
  EXPECT_EQ(a->type, fs::FileType::Chr);
  EXPECT_EQ(a->rdev_major, 8u);
  EXPECT_EQ(a->rdev_minor, 1u);
  EXPECT_EQ(lookup(r, "fifo", &id, &a), Status::NoEnt);  // RENAME
  ASSERT_EQ(lookup(dir_id, "fifo2", &id, &a), Status::Ok);
  EXPECT_EQ(id, told["fifo"]);
  EXPECT_EQ(a->type, fs::FileType::Fifo);
  ASSERT_EQ(lookup(dir_id, "hard", &id, &a), Status::Ok);
  EXPECT_EQ(id, told["file"]);
  ASSERT_EQ(lookup(r, "late", &id, &a), Status::Ok);
  EXPECT_EQ(id, told["late"]);
  // Replayed once: the next start finds nothing left to replay, and the same volume.
  volume.reset();
  journal.reset();
  target.reset();
  journal = Journal::open(testing::small_options(dir.file("nvram.img"), 4 << 20));
  target = testing::open_backing(GetParam(), dir.path(), 1);
  JournalVolume again(journal, target);
  EXPECT_EQ(again.recover().applied, 0u);
  std::optional<fs::Attr> da;
  ASSERT_EQ(again.lookup(ctx, dir_id, "fifo2", &id, &a, &da), Status::Ok);
  EXPECT_EQ(id, told["fifo"]);
  std::printf("replay (%s): %llu records replayed, %llu already durable\n",
              testing::backing_name(GetParam()), static_cast<unsigned long long>(rep.applied),
              static_cast<unsigned long long>(rep.skipped));
}

INSTANTIATE_TEST_SUITE_P(Backings, ReplayEveryCall,
                         ::testing::ValuesIn(testing::available_backings()),
                         [](const auto& info) { return testing::backing_name(info.param); });

}  // namespace
}  // namespace nasd::nvram
