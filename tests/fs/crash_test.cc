// Crash test: a child process runs random stable operations and reports each one it saw
// acknowledged through a pipe; the parent SIGKILLs it at a random moment, then recovers the
// volume, runs fsck, and checks that the state is exactly the acknowledged operations, plus at
// most the one that was in flight.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "fs/lfs/fsck.h"
#include "tests/fs/test_volume.h"

namespace nasd::fs::lfs::testing {
namespace {

enum class OpKind : uint32_t { Create = 1, Write = 2, Rename = 3, Remove = 4, Mkdir = 5, Rmdir = 6 };

// One pipe message: phase 0 = about to run, 1 = acknowledged.
struct Message {
  uint32_t phase;
  OpKind kind;
  uint32_t a, b;        // name numbers
  uint32_t offset, len, seed;
};

struct Object {
  bool dir = false;
  std::vector<uint8_t> data;
};
using Model = std::map<std::string, Object>;

std::string fname(uint32_t n) { return "n" + std::to_string(n); }

void apply_op(Model& m, const Message& op) {
  switch (op.kind) {
    case OpKind::Create: m[fname(op.a)] = Object{}; break;
    case OpKind::Mkdir: m[fname(op.a)] = Object{true, {}}; break;
    case OpKind::Write: {
      auto& d = m[fname(op.a)].data;
      auto bytes = pattern(op.len, op.seed);
      if (d.size() < op.offset + op.len) d.resize(op.offset + op.len, 0);
      std::copy(bytes.begin(), bytes.end(), d.begin() + op.offset);
      break;
    }
    case OpKind::Rename: {
      Object o = m[fname(op.a)];
      m.erase(fname(op.a));
      m[fname(op.b)] = o;
      break;
    }
    case OpKind::Remove:
    case OpKind::Rmdir: m.erase(fname(op.a)); break;
  }
}

// Picks a random operation valid for the model.
Message pick(std::mt19937& rng, const Model& m, uint32_t& next_name) {
  std::vector<std::string> files, dirs;
  for (auto& [n, o] : m) (o.dir ? dirs : files).push_back(n);
  auto num = [](const std::string& n) { return uint32_t(std::stoul(n.substr(1))); };
  Message op{0, OpKind::Create, 0, 0, 0, 0, 0};
  int r = int(rng() % 100);
  if (files.empty() || r < 20) {
    op.kind = OpKind::Create;
    op.a = next_name++;
  } else if (r < 60) {
    op.kind = OpKind::Write;
    op.a = num(files[rng() % files.size()]);
    op.offset = uint32_t(rng() % 20000);
    op.len = 1 + uint32_t(rng() % 40000);
    op.seed = rng();
  } else if (r < 75) {
    op.kind = OpKind::Rename;
    op.a = num(files[rng() % files.size()]);
    // Half the time over another existing file.
    op.b = (rng() % 2 && files.size() > 1) ? num(files[rng() % files.size()]) : next_name++;
    if (op.b == op.a) op.b = next_name++;
  } else if (r < 88) {
    op.kind = OpKind::Remove;
    op.a = num(files[rng() % files.size()]);
  } else if (dirs.empty() || r < 94) {
    op.kind = OpKind::Mkdir;
    op.a = next_name++;
  } else {
    op.kind = OpKind::Rmdir;
    op.a = num(dirs[rng() % dirs.size()]);
  }
  return op;
}

// With a `journal_seq`, the call goes in the way the NVRAM journal runs it (tagged, not synced).
Status run(LfsVolume& v, const Message& op, uint64_t journal_seq = 0) {
  OpContext ctx = root_ctx();
  InodeId root = v.root(), id;
  std::optional<Attr> a;
  Wcc w, w2;
  if (journal_seq != 0) {
    const std::string name = fname(op.a), name2 = fname(op.b);
    std::vector<uint8_t> data;
    call::CallArgs args;
    switch (op.kind) {
      case OpKind::Create:
        args = call::CreateArgs{root, name, CreateMode::Guarded, SetAttr{}, 0};
        break;
      case OpKind::Mkdir: args = call::MkdirArgs{root, name, SetAttr{}}; break;
      case OpKind::Write: {
        std::optional<Attr> da;
        Status st = v.lookup(ctx, root, name, &id, &a, &da);
        if (st != Status::Ok) return st;
        data = pattern(op.len, op.seed);
        args = call::WriteArgs{id, op.offset, data, Stability::Unstable};
        break;
      }
      case OpKind::Rename: args = call::RenameArgs{root, name, root, name2}; break;
      case OpKind::Remove: args = call::RemoveArgs{root, name}; break;
      case OpKind::Rmdir: args = call::RmdirArgs{root, name}; break;
    }
    return apply_journalled_for_testing(v, journal_seq, args).status;
  }
  switch (op.kind) {
    case OpKind::Create:
      return v.create(ctx, root, fname(op.a), CreateMode::Guarded, SetAttr{}, 0, &id, &a, &w);
    case OpKind::Mkdir: return v.mkdir(ctx, root, fname(op.a), SetAttr{}, &id, &a, &w);
    case OpKind::Write: {
      std::optional<Attr> da;
      Status st = v.lookup(ctx, root, fname(op.a), &id, &a, &da);
      if (st != Status::Ok) return st;
      Stability got;
      return v.write(ctx, id, op.offset, pattern(op.len, op.seed),
                     op.seed % 2 ? Stability::FileSync : Stability::DataSync, &got, &w);
    }
    case OpKind::Rename: return v.rename(ctx, root, fname(op.a), root, fname(op.b), &w, &w2);
    case OpKind::Remove: return v.remove(ctx, root, fname(op.a), &w);
    case OpKind::Rmdir: return v.rmdir(ctx, root, fname(op.a), &w);
  }
  return Status::Inval;
}

// With `journalled`, operations carry journal sequence numbers 1, 2, ... and are not synced one
// by one; now and then the child calls flush() and reports the durable sequence (phase 2, in
// `offset`).
[[noreturn]] void child(const LfsOptions& o, int fd, uint32_t seed, bool journalled = false) {
  std::string err;
  LfsOptions co = o;
  co.background_threads = true;  // the write-behind and cleaner run as in production
  co.flush_interval_ms = 20;
  auto v = LfsVolume::open(co, &err);
  if (!v) _exit(3);
  std::mt19937 rng(seed);
  Model m;
  uint32_t next_name = 1;
  for (int i = 0; i < 100000; i++) {
    Message op = pick(rng, m, next_name);
    op.phase = 0;
    if (::write(fd, &op, sizeof op) != sizeof op) _exit(4);
    Status st = run(*v, op, journalled ? uint64_t(i) + 1 : 0);
    if (st != Status::Ok) _exit(10 + int(st) % 100);
    apply_op(m, op);
    op.phase = 1;
    if (::write(fd, &op, sizeof op) != sizeof op) _exit(4);
    if (journalled && rng() % 8 == 0) {
      uint64_t durable = 0;
      if (v->flush(&durable) != Status::Ok) _exit(5);
      Message d{2, OpKind::Create, 0, 0, uint32_t(durable), 0, 0};
      if (::write(fd, &d, sizeof d) != sizeof d) _exit(4);
    }
  }
  _exit(0);
}

// Reads the whole root directory (names, types and file contents).
Model actual_state(LfsVolume& v) {
  Model m;
  uint64_t cookie = 0;
  for (int i = 0; i < 100000; i++) {
    ReaddirResult r;
    EXPECT_EQ(v.readdir(root_ctx(), v.root(), cookie, 0, 256, true, &r), Status::Ok);
    for (auto& e : r.entries) {
      cookie = e.cookie;
      if (e.name == "." || e.name == "..") continue;
      Object o;
      o.dir = e.attr->type == FileType::Dir;
      if (!o.dir) o.data = read_at(v, e.id, 0, uint32_t(e.attr->size));
      m[e.name] = o;
    }
    if (r.eof) break;
  }
  return m;
}

bool same(const Model& a, const Model& b) {
  if (a.size() != b.size()) return false;
  for (auto& [n, o] : a) {
    auto it = b.find(n);
    if (it == b.end() || it->second.dir != o.dir || it->second.data != o.data) return false;
  }
  return true;
}

TEST(Crash, KilledWriterLosesNoAcknowledgedOperation) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::mt19937 rng(20261202);
  int rounds = 0;
  ScratchDir dir;
  LfsOptions o = small_options(dir.path(), 96ull << 20, 1ull << 20);
  for (; rounds < 8 && std::chrono::steady_clock::now() < deadline; rounds++) {
    // Each round starts from a fresh volume so the child's model matches from scratch.
    std::filesystem::remove(o.backing);
    { auto v = make_volume(o); ASSERT_TRUE(v); v->close(); }
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    uint32_t seed = rng();
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      child(o, fds[1], seed);
    }
    ::close(fds[1]);
    usleep(useconds_t(150000 + rng() % 700000));
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited early with " << WEXITSTATUS(status);
    Model model;
    std::optional<Message> in_flight;
    Message msg;
    size_t acks = 0;
    while (::read(fds[0], &msg, sizeof msg) == ssize_t(sizeof msg)) {
      if (msg.phase == 0) {
        in_flight = msg;
      } else {
        apply_op(model, msg);
        in_flight.reset();
        acks++;
      }
    }
    ::close(fds[0]);
    if (const char* keep = getenv("NASD_CRASH_KEEP"))  // for debugging a failure by hand
      std::filesystem::copy_file(o.backing, keep, std::filesystem::copy_options::overwrite_existing);
    FsckReport rep = fsck_volume(o);
    ASSERT_TRUE(rep.error.empty()) << rep.error;
    if (!rep.problems.empty() && in_flight)
      ADD_FAILURE() << "in flight: kind " << int(in_flight->kind) << " a " << in_flight->a
                    << " b " << in_flight->b;
    for (auto& p : rep.problems) ADD_FAILURE() << "round " << rounds << " fsck: " << p;
    auto v = reopen(o);
    ASSERT_TRUE(v);
    Model got = actual_state(*v);
    Model with = model;
    if (in_flight) apply_op(with, *in_flight);
    EXPECT_TRUE(same(got, model) || same(got, with))
        << "round " << rounds << ": state after recovery is not the acknowledged prefix ("
        << acks << " acks, " << got.size() << " objects vs " << model.size() << ")";
    EXPECT_GT(acks, 0u);
    v.reset();
  }
  EXPECT_GE(rounds, 3);
}

// The JournalTarget contract: after a crash the volume holds exactly the operations with
// journal_seq <= durable_seq() (so the journal can replay the rest), and durable_seq() never
// goes back behind a value flush() reported.
TEST(Crash, JournalledOperationsRecoverToExactlyDurableSeq) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(12);
  std::mt19937 rng(4711);
  ScratchDir dir;
  LfsOptions o = small_options(dir.path(), 96ull << 20, 1ull << 20);
  int rounds = 0;
  for (; rounds < 5 && std::chrono::steady_clock::now() < deadline; rounds++) {
    std::filesystem::remove(o.backing);
    { auto v = make_volume(o); ASSERT_TRUE(v); v->close(); }
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(fds[0]);
      child(o, fds[1], rng(), true);
    }
    ::close(fds[1]);
    usleep(useconds_t(150000 + rng() % 500000));
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited early with " << WEXITSTATUS(status);
    std::vector<Message> ops;  // in journal order: ops[i] has journal_seq i + 1
    uint64_t reported = 0;
    Message msg;
    while (::read(fds[0], &msg, sizeof msg) == ssize_t(sizeof msg)) {
      if (msg.phase == 0) ops.push_back(msg);
      if (msg.phase == 2) reported = msg.offset;
    }
    ::close(fds[0]);
    FsckReport rep = fsck_volume(o);
    ASSERT_TRUE(rep.error.empty()) << rep.error;
    for (auto& p : rep.problems) ADD_FAILURE() << "round " << rounds << " fsck: " << p;
    auto v = reopen(o);
    ASSERT_TRUE(v);
    uint64_t durable = v->durable_seq();
    EXPECT_GE(durable, reported) << "round " << rounds;
    ASSERT_LE(durable, ops.size());
    Model want;
    for (uint64_t i = 0; i < durable; i++) apply_op(want, ops[i]);
    EXPECT_TRUE(same(actual_state(*v), want))
        << "round " << rounds << ": state is not exactly journal ops 1.." << durable;
    v.reset();
  }
  EXPECT_GE(rounds, 3);
}

}  // namespace
}  // namespace nasd::fs::lfs::testing
