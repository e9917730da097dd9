// A volume filled to the brim by a metadata-heavy journalled load (many small files, writes,
// truncates, renames, directories, removes) the way the NVRAM journal runs calls: every call
// is admitted (Ok) or refused with NoSpc, and no flush ever finds the log full: the volume
// never fails. A crash at the fullest point, then a replay of the calls not yet durable, gives
// back every acknowledged operation; deletes then make room and writes resume by themselves.
#include <chrono>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "fs/call/calls.h"
#include "fs/lfs/fsck.h"
#include "tests/fs/test_volume.h"

namespace nasd::fs::lfs::testing {
namespace {

// One acknowledged journalled call, kept (with its own bytes) until a flush made it durable, so
// that it can be replayed after a crash as the NVRAM journal would.
struct Acked {
  uint64_t seq = 0;
  call::VolumeOp op = call::VolumeOp::Getattr;
  InodeId id, dir, dir2;
  std::string name, name2;
  std::vector<uint8_t> data;
  uint64_t offset = 0;
  SetAttr sa;
  std::optional<InodeId> created;
};

struct FileModel {
  InodeId id;
  std::vector<uint8_t> bytes;
};

class FullVolumeLoad {
 public:
  explicit FullVolumeLoad(LfsVolume* v) : v_(v) { dirs_.push_back({"", v->root()}); }

  void set_volume(LfsVolume* v) { v_ = v; }
  uint64_t nospc() const { return nospc_; }
  uint64_t acked() const { return acked_; }
  size_t files() const { return files_.size(); }

  // One random call; `grow` weights the mix towards creating and extending.
  void step(std::mt19937& rng, bool grow) {
    const uint32_t r = rng() % 100;
    if (files_.empty() || r < (grow ? 30u : 15u)) return create(rng);
    if (r < 50) return write(rng);
    if (r < 60) return truncate(rng);
    if (r < 75) return rename(rng);
    if (r < 78) return mkdir();
    if (r < 83) return chmod(rng);
    if (r < (grow ? 88u : 95u)) return remove(random_file(rng));
  }

  // Removes about `share` of the files (deletes must always go through).
  void remove_share(std::mt19937& rng, double share) {
    size_t n = size_t(double(files_.size()) * share);
    for (size_t i = 0; i < n && !files_.empty(); i++) remove(random_file(rng));
  }

  // The journal's flush pass: must always succeed; drops the calls it made durable.
  void flush() {
    uint64_t durable = 0;
    ASSERT_EQ(v_->flush(&durable), Status::Ok) << "a flush failed after " << acked_ << " calls";
    ASSERT_FALSE(v_->report().failed);
    while (!pending_.empty() && pending_.front().seq <= durable) pending_.erase(pending_.begin());
  }

  // After a crash: replays every acknowledged call the reopened volume does not hold.
  void replay() {
    const uint64_t durable = v_->durable_seq();
    size_t replayed = 0;
    for (const Acked& a : pending_) {
      if (a.seq <= durable) continue;
      call::VolumeReply got = run(a, /*replay=*/true);
      ASSERT_EQ(got.status, Status::Ok) << "replay of seq " << a.seq << " (op " << int(a.op) << ")";
      replayed++;
    }
    EXPECT_GT(replayed, 0u) << "the crash left nothing to replay: the test proves less";
  }

  // Every acknowledged operation is there: each file's bytes under its name, nothing else.
  void verify() {
    for (const auto& [path, f] : files_) {
      const auto slash = path.find('/');
      InodeId dir = dir_id(path.substr(0, slash)), id;
      ASSERT_EQ(lookup(*v_, dir, path.substr(slash + 1), &id), Status::Ok) << path;
      ASSERT_EQ(id, f.id) << path;
      ASSERT_EQ(getattr(*v_, id).size, f.bytes.size()) << path;
      if (!f.bytes.empty()) {
        ASSERT_EQ(read_at(*v_, id, 0, uint32_t(f.bytes.size())), f.bytes) << path;
      }
    }
  }

 private:
  using Files = std::map<std::string, FileModel>;

  call::VolumeReply run(const Acked& a, bool replay = false) {
    auto apply = [&](call::CallArgs args) {
      return replay ? replay_journalled_for_testing(*v_, a.seq, std::move(args), a.created)
                    : apply_journalled_for_testing(*v_, a.seq, std::move(args), a.created);
    };
    switch (a.op) {
      case call::VolumeOp::Create:
        return apply(call::CreateArgs{a.dir, a.name, CreateMode::Guarded, a.sa, 0});
      case call::VolumeOp::Mkdir:
        return apply(call::MkdirArgs{a.dir, a.name, a.sa});
      case call::VolumeOp::Write:
        return apply(call::WriteArgs{a.id, a.offset, a.data, Stability::Unstable});
      case call::VolumeOp::Setattr:
        return apply(call::SetattrArgs{a.id, a.sa, {}});
      case call::VolumeOp::Rename:
        return apply(call::RenameArgs{a.dir, a.name, a.dir2, a.name2});
      case call::VolumeOp::Remove:
        return apply(call::RemoveArgs{a.dir, a.name});
      default: return {};
    }
  }

  // Runs a call as the journal would; Ok keeps it for replay, NoSpc is counted, anything else
  // fails the test.
  Status call(Acked a, InodeId* created = nullptr) {
    a.seq = next_seq_++;
    call::VolumeReply got = run(a);
    if (got.status == Status::NoSpc) {
      nospc_++;
      return got.status;
    }
    EXPECT_EQ(got.status, Status::Ok) << "op " << int(a.op) << " after " << acked_ << " calls";
    if (got.status != Status::Ok) return got.status;
    if (const auto* c = std::get_if<call::CreatedResult>(&got.result)) {
      a.created = c->id;
      if (created) *created = c->id;
    }
    acked_++;
    pending_.push_back(std::move(a));
    // The journal's write-behind pass runs every flush interval.
    const auto now = std::chrono::steady_clock::now();
    if (now - last_flush_ >= kFlushInterval) {
      last_flush_ = now;
      flush();
    }
    return Status::Ok;
  }

  std::string random_file(std::mt19937& rng) {
    auto it = files_.begin();
    std::advance(it, rng() % files_.size());
    return it->first;
  }
  InodeId dir_id(const std::string& name) {
    for (auto& [n, id] : dirs_)
      if (n == name) return id;
    return InodeId{};
  }
  static std::pair<std::string, std::string> split(const std::string& path) {
    const auto slash = path.find('/');
    return {path.substr(0, slash), path.substr(slash + 1)};
  }

  void create(std::mt19937& rng) {
    const auto& [dname, dir] = dirs_[rng() % dirs_.size()];
    Acked a;
    a.op = call::VolumeOp::Create;
    a.dir = dir;
    a.name = "f" + std::to_string(next_name_++);
    a.sa.mode = 0644;
    InodeId id;
    if (call(a, &id) != Status::Ok) return;
    const std::string path = dname + "/" + a.name;
    files_[path] = FileModel{id, {}};
    write_at_offset(path, 0, 1 + rng() % 12000, rng());
  }

  void write_at_offset(const std::string& path, uint64_t off, size_t len, uint32_t seed) {
    FileModel& f = files_[path];
    Acked a;
    a.op = call::VolumeOp::Write;
    a.id = f.id;
    a.offset = off;
    a.data = pattern(len, seed);
    if (call(a) != Status::Ok) return;
    if (f.bytes.size() < off + len) f.bytes.resize(off + len, 0);
    std::copy(a.data.begin(), a.data.end(), f.bytes.begin() + long(off));
  }

  void write(std::mt19937& rng) {
    const std::string path = random_file(rng);
    const uint64_t size = files_[path].bytes.size();
    write_at_offset(path, rng() % (size + 1), 1 + rng() % 8192, rng());
  }

  void truncate(std::mt19937& rng) {
    const std::string path = random_file(rng);
    FileModel& f = files_[path];
    Acked a;
    a.op = call::VolumeOp::Setattr;
    a.id = f.id;
    a.sa.size = rng() % (f.bytes.size() + 8192);
    if (call(a) == Status::Ok) f.bytes.resize(*a.sa.size, 0);
  }

  void chmod(std::mt19937& rng) {
    Acked a;
    a.op = call::VolumeOp::Setattr;
    a.id = files_[random_file(rng)].id;
    a.sa.mode = 0600 | (rng() % 0100);
    (void)call(a);
  }

  void rename(std::mt19937& rng) {
    const std::string from = random_file(rng);
    const auto& [to_dname, to_dir] = dirs_[rng() % dirs_.size()];
    // Now and then onto an existing file of the target directory (it is replaced).
    std::string to_name = "f" + std::to_string(next_name_++);
    if (rng() % 4 == 0) {
      const std::string other = random_file(rng);
      if (split(other).first == to_dname && other != from) to_name = split(other).second;
    }
    const auto [from_dname, from_name] = split(from);
    Acked a;
    a.op = call::VolumeOp::Rename;
    a.dir = dir_id(from_dname);
    a.name = from_name;
    a.dir2 = to_dir;
    a.name2 = to_name;
    const std::string to = to_dname + "/" + to_name;
    if (call(a) != Status::Ok) return;
    FileModel moved = files_[from];
    files_.erase(from);
    files_[to] = moved;
  }

  void mkdir() {
    Acked a;
    a.op = call::VolumeOp::Mkdir;
    a.dir = v_->root();
    a.name = "d" + std::to_string(dirs_.size());
    a.sa.mode = 0755;
    InodeId id;
    if (call(a, &id) == Status::Ok) dirs_.push_back({a.name, id});
  }

  void remove(const std::string& path) {
    const auto [dname, name] = split(path);
    Acked a;
    a.op = call::VolumeOp::Remove;
    a.dir = dir_id(dname);
    a.name = name;
    // Deletes go on on a full volume: never NoSpc.
    ASSERT_EQ(call(a), Status::Ok) << "remove " << path << " on a full volume";
    files_.erase(path);
  }

  LfsVolume* v_;
  std::vector<std::pair<std::string, InodeId>> dirs_;  // "" is the root
  Files files_;
  std::vector<Acked> pending_;
  uint64_t next_seq_ = 1, next_name_ = 0, nospc_ = 0, acked_ = 0;
  static constexpr std::chrono::milliseconds kFlushInterval{200};
  std::chrono::steady_clock::time_point last_flush_ = std::chrono::steady_clock::now();
};

void expect_fsck_clean(const LfsOptions& o) {
  FsckReport r = fsck_volume(o);
  EXPECT_TRUE(r.error.empty()) << r.error;
  for (size_t i = 0; i < r.problems.size() && i < 20; i++) ADD_FAILURE() << "fsck: " << r.problems[i];
}

// The README's drill size with the default 4 MiB segments (the geometry of the report in
// issue 36), with a cache large enough that a flush's group can be big.
TEST(FullVolume, MetadataLoadToNoSpcNeverFailsAndSurvivesACrashAtTheFullestPoint) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path(), 256ull << 20, 4ull << 20);
  o.cache_bytes = 512ull << 20;  // auto_cache_bytes' floor: what a drill volume gets
  o.background_threads = true;
  auto v = make_volume(o);
  ASSERT_TRUE(v);
  FullVolumeLoad load(v.get());
  std::mt19937 rng(36);
  // Fill: growth-heavy until the volume has refused a good number of calls.
  for (int i = 0; i < 400000 && load.nospc() < 500 && !HasFatalFailure(); i++) load.step(rng, true);
  ASSERT_GE(load.nospc(), 500u) << "the volume never filled up";
  // At the fullest point: the whole mix for a while (most growth refused, the rest goes on).
  for (int i = 0; i < 8000 && !HasFatalFailure(); i++) load.step(rng, true);
  ASSERT_FALSE(HasFatalFailure());
  load.flush();
  for (int i = 0; i < 60 && !HasFatalFailure(); i++) load.step(rng, false);  // not yet durable
  ASSERT_FALSE(HasFatalFailure());
  // kill -9: the volume is dropped without close(); the journal replays what it holds.
  v.reset();
  v = reopen(o);
  ASSERT_TRUE(v);
  load.set_volume(v.get());
  load.replay();
  ASSERT_FALSE(HasFatalFailure());
  load.verify();
  ASSERT_FALSE(HasFatalFailure());
  load.flush();
  ASSERT_EQ(v->close(), Status::Ok);
  expect_fsck_clean(o);

  // Deletes make room; writes resume without anything else being done.
  v = reopen(o);
  ASSERT_TRUE(v);
  load.set_volume(v.get());
  load.remove_share(rng, 0.5);
  ASSERT_FALSE(HasFatalFailure());
  const uint64_t acked_before = load.acked(), nospc_before = load.nospc();
  for (int i = 0; i < 3000 && !HasFatalFailure(); i++) load.step(rng, true);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_GT(load.acked() - acked_before, 2500u) << "writes did not resume after deletes ("
                                                 << load.nospc() - nospc_before << " NoSpc)";
  load.flush();
  load.verify();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_EQ(v->close(), Status::Ok);
  expect_fsck_clean(o);
}

}  // namespace
}  // namespace nasd::fs::lfs::testing
