// LfsVolume's write path under concurrency: the non-blocking WRITE attempt the NFS server runs
// on its event loop (try_write), flushes whose device write lets readers and writers in
// (copy-on-write of the group's blocks), and back-pressure that leaves the flushing to the background thread.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "fs/lfs/write_gate.h"
#include "tests/fs/test_volume.h"
#include "tests/support/journal_pass_for_testing.h"

namespace nasd::fs::lfs::testing {
namespace {

// Holds every batch of writes at enter() while closed, and remembers which threads wrote.
class HoldingGate : public WriteGate {
 public:
  bool enter() override {
    std::unique_lock<std::mutex> lk(mu_);
    writers_.insert(std::this_thread::get_id());
    if (!open_) {
      held_++;
      cv_.notify_all();
    }
    cv_.wait(lk, [&] { return open_; });
    return true;
  }
  void leave() override {}
  void close() {
    std::lock_guard<std::mutex> g(mu_);
    open_ = false;
  }
  void open() {
    std::lock_guard<std::mutex> g(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool wait_for_writer(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lk(mu_);
    return cv_.wait_for(lk, limit, [&] { return held_ > 0; });
  }
  std::set<std::thread::id> writers() {
    std::lock_guard<std::mutex> g(mu_);
    return writers_;
  }
  void forget_writers() {
    std::lock_guard<std::mutex> g(mu_);
    writers_.clear();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int held_ = 0;
  std::set<std::thread::id> writers_;
};

std::optional<Status> try_write(LfsVolume& v, InodeId f, uint64_t off,
                                const std::vector<uint8_t>& d,
                                Stability s = Stability::Unstable) {
  Stability got;
  Wcc w;
  return v.try_write(root_ctx(), f, off, d, s, &got, &w);
}

TEST(LfsWritePath, AttemptAnswersFromMemoryAndRefusesWhatNeedsTheDisk) {
  ScratchDir dir;
  LfsOptions opts = small_options(dir.path());
  InodeId d, f;
  std::vector<uint8_t> model = pattern(3 * 4096, 3);
  {
    auto vol = make_volume(opts);
    d = make_dir(*vol, vol->root(), "d");
    f = create_file(*vol, d, "f");
    ASSERT_EQ(write_at(*vol, f, 0, model), Status::Ok);
    ASSERT_EQ(vol->close(), Status::Ok);
  }
  auto vol = reopen(opts);  // only the inode map is in memory
  ASSERT_TRUE(vol);
  const std::vector<uint8_t> piece = pattern(1000, 9);
  EXPECT_FALSE(try_write(*vol, f, 10, piece)) << "an uncached inode was written";
  getattr(*vol, f);
  // Block 2 is allocated but not cached: a partial write must read it first.
  EXPECT_FALSE(try_write(*vol, f, 2 * 4096 + 10, piece)) << "a partial uncached block was written";
  // Block 0 cached (and the block map with it): a partial write is taken from memory.
  EXPECT_EQ(read_at(*vol, f, 0, 10), std::vector<uint8_t>(model.begin(), model.begin() + 10));
  ASSERT_EQ(try_write(*vol, f, 10, piece), std::optional<Status>(Status::Ok));
  std::copy(piece.begin(), piece.end(), model.begin() + 10);
  // A whole block needs no read even when it is not cached; a block past the end is new.
  ASSERT_EQ(try_write(*vol, f, 4096, pattern(4096, 4)), std::optional<Status>(Status::Ok));
  const std::vector<uint8_t> whole = pattern(4096, 4);
  std::copy(whole.begin(), whole.end(), model.begin() + 4096);
  ASSERT_EQ(try_write(*vol, f, 5 * 4096 + 7, piece), std::optional<Status>(Status::Ok));
  model.resize(5 * 4096 + 7, 0);
  model.insert(model.end(), piece.begin(), piece.end());
  // What the refused attempt at block 2 would have changed is still the old contents.
  EXPECT_EQ(read_at(*vol, f, 0, uint32_t(model.size())), model);
  EXPECT_EQ(getattr(*vol, f).size, model.size());
  // Without a journal a stable WRITE waits for the disk; errors are answers.
  EXPECT_FALSE(try_write(*vol, f, 0, piece, Stability::FileSync));
  getattr(*vol, d);
  EXPECT_EQ(try_write(*vol, d, 0, piece), std::optional<Status>(Status::IsDir));
  EXPECT_EQ(try_write(*vol, InodeId{f.ino, f.gen + 1}, 0, piece),
            std::optional<Status>(Status::Stale));
  ASSERT_EQ(vol->close(), Status::Ok);
  auto again = reopen(opts);
  ASSERT_TRUE(again);
  EXPECT_EQ(read_at(*again, f, 0, uint32_t(model.size())), model);
}

TEST(LfsWritePath, JournalledAttemptNotesItsSequenceAndSurvivesACrashAfterTheFlush) {
  ScratchDir dir;
  LfsOptions opts = small_options(dir.path());
  InodeId f;
  const std::vector<uint8_t> data = pattern(3 * 4096 + 5, 11);
  {
    auto vol = make_volume(opts);
    f = create_file(*vol, vol->root(), "f");
    ASSERT_EQ(write_at(*vol, f, 0, pattern(4096, 1)), Status::Ok);  // inode and block cached
    auto reply = try_apply_journalled_write_for_testing(
        *vol, 41, call::WriteArgs{f, 0, data, Stability::Unstable});
    ASSERT_TRUE(reply);
    ASSERT_EQ(reply->status, Status::Ok);
    uint64_t durable = 0;
    ASSERT_EQ(vol->flush(&durable), Status::Ok);
    EXPECT_EQ(durable, 41u) << "the attempt did not note its journal sequence";
    vol->abandon();  // a crash: no checkpoint
  }
  auto vol = reopen(opts);
  ASSERT_TRUE(vol);
  EXPECT_EQ(vol->durable_seq(), 41u);
  EXPECT_EQ(read_at(*vol, f, 0, uint32_t(data.size())), data);
}

TEST(LfsWritePath, AttemptsNeverWaitForTheLock) {
  ScratchDir dir;
  LfsOptions opts = small_options(dir.path());
  auto gate = std::make_shared<HoldingGate>();
  opts.write_gate = gate;
  auto vol = make_volume(opts);
  ASSERT_TRUE(vol);
  InodeId f = create_file(*vol, vol->root(), "f");
  InodeId g = create_file(*vol, vol->root(), "g");
  ASSERT_EQ(write_at(*vol, f, 0, pattern(4096, 1)), Status::Ok);
  ASSERT_EQ(write_at(*vol, g, 0, pattern(4096, 1), Stability::Unstable), Status::Ok);
  gate->close();
  // A checkpoint keeps the exclusive lock through its device writes.
  std::thread cp([&] { EXPECT_EQ(vol->checkpoint_now(), Status::Ok); });
  ASSERT_TRUE(gate->wait_for_writer(std::chrono::seconds(10)));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(try_write(*vol, f, 0, pattern(100, 2)));
  Attr attr;
  EXPECT_FALSE(vol->try_getattr(root_ctx(), f, &attr));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  gate->open();
  cp.join();
  EXPECT_EQ(read_at(*vol, f, 0, 4096), pattern(4096, 1)) << "the refused attempt changed data";
  vol->close();
}

TEST(LfsWritePath, ReadersAndWritersGoOnWhileAFlushWritesTheDevice) {
  ScratchDir dir;
  LfsOptions opts = small_options(dir.path());
  auto gate = std::make_shared<HoldingGate>();
  opts.write_gate = gate;
  auto vol = make_volume(opts);
  ASSERT_TRUE(vol);
  InodeId f = create_file(*vol, vol->root(), "f");
  InodeId g = create_file(*vol, vol->root(), "g");
  ASSERT_EQ(write_at(*vol, f, 0, pattern(4096, 1)), Status::Ok);
  gate->close();
  // A FILE_SYNC write of another file: its flush builds and seals the group under the
  // exclusive lock, then writes it (and stops in the gate) with the lock released.
  std::thread writer([&] { EXPECT_EQ(write_at(*vol, g, 0, pattern(8192, 2)), Status::Ok); });
  ASSERT_TRUE(gate->wait_for_writer(std::chrono::seconds(10)));
  const OpContext ctx = root_ctx();
  Attr attr;
  EXPECT_EQ(vol->try_getattr(ctx, f, &attr), std::optional<Status>(Status::Ok))
      << "a reader waited for the flush's device write";
  std::vector<uint8_t> data;
  bool eof;
  std::optional<Attr> a;
  EXPECT_EQ(vol->try_read(ctx, f, 0, 4096, &data, &eof, &a), std::optional<Status>(Status::Ok));
  EXPECT_EQ(data, pattern(4096, 1));
  // Writers too, on the event loop and on an executor thread: the group's blocks they change
  // are copied (copy-on-write), the group keeps the bytes it was sealed with.
  EXPECT_EQ(try_write(*vol, g, 0, pattern(10, 3)), std::optional<Status>(Status::Ok))
      << "an event-loop writer waited for the flush's device write";
  std::atomic<bool> second_done{false};
  std::thread second([&] {
    EXPECT_EQ(write_at(*vol, f, 0, pattern(10, 4), Stability::Unstable), Status::Ok);
    second_done = true;
  });
  for (int i = 0; i < 500 && !second_done.load(); i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(second_done.load()) << "a writer waited for the flush's device write";
  gate->open();
  writer.join();
  second.join();
  std::vector<uint8_t> want_g = pattern(8192, 2);
  std::copy_n(pattern(10, 3).begin(), 10, want_g.begin());
  EXPECT_EQ(read_at(*vol, g, 0, 8192), want_g);
  ASSERT_EQ(vol->close(), Status::Ok);
  auto again = reopen(opts);
  ASSERT_TRUE(again);
  EXPECT_EQ(read_at(*again, g, 0, 8192), want_g);
}

// A write to blocks of a group being written lands in the next group: a crash after the
// first group leaves the file as it was sealed (older content, older size), a crash after the
// next one leaves the newer content and size; never the new blocks under the old size. The
// write is one UNSTABLE WRITE (no journal here) that rewrites the 8 blocks the group holds and
// adds a ninth, so a group that wrote the writer's bytes shows a state no call ever left.
void write_during_flight_then_crash(bool flush_the_next_group) {
  ScratchDir dir;
  LfsOptions opts = small_options(dir.path());
  auto gate = std::make_shared<HoldingGate>();
  opts.write_gate = gate;
  const std::vector<uint8_t> older = pattern(8 * 4096, 21), newer = pattern(9 * 4096, 22);
  InodeId f;
  {
    auto vol = make_volume(opts);
    ASSERT_TRUE(vol);
    f = create_file(*vol, vol->root(), "f");
    InodeId g = create_file(*vol, vol->root(), "g");
    ASSERT_EQ(write_at(*vol, f, 0, older, Stability::Unstable), Status::Ok);
    gate->close();
    std::thread sealer([&] { EXPECT_EQ(write_at(*vol, g, 0, pattern(4096, 2)), Status::Ok); });
    ASSERT_TRUE(gate->wait_for_writer(std::chrono::seconds(10)));
    // The group in flight holds f's 8 blocks and its size; rewrite them all, and grow f.
    EXPECT_EQ(try_write(*vol, f, 0, newer), std::optional<Status>(Status::Ok));
    gate->open();
    sealer.join();
    EXPECT_EQ(read_at(*vol, f, 0, uint32_t(newer.size())), newer);
    if (flush_the_next_group) {
      uint64_t durable = 0;
      ASSERT_EQ(vol->flush(&durable), Status::Ok);
    }
    vol->abandon();  // a crash: nothing more reaches the device, no checkpoint
  }
  auto vol = reopen(opts);
  ASSERT_TRUE(vol);
  const uint64_t size = getattr(*vol, f).size;
  const std::vector<uint8_t> got = read_at(*vol, f, 0, uint32_t(newer.size()));
  if (flush_the_next_group) {
    EXPECT_EQ(size, newer.size());
    EXPECT_TRUE(got == newer) << "the write made during the flight is not in the next group";
  } else {
    EXPECT_EQ(size, older.size());
    EXPECT_TRUE(got == older) << "the group in flight wrote bytes changed after it was sealed";
  }
}

TEST(LfsWritePath, AWriteDuringAFlightIsNotInTheGroupInFlight) {
  write_during_flight_then_crash(false);
}
TEST(LfsWritePath, AWriteDuringAFlightLandsInTheNextGroup) {
  write_during_flight_then_crash(true);
}

// abandon() promises that nothing more reaches the device (another node may own it next):
// it waits for a group another thread is writing with the lock released.
TEST(LfsWritePath, AbandonWaitsForTheGroupInFlight) {
  ScratchDir dir;
  LfsOptions opts = small_options(dir.path());
  auto gate = std::make_shared<HoldingGate>();
  opts.write_gate = gate;
  auto vol = make_volume(opts);
  ASSERT_TRUE(vol);
  InodeId g = create_file(*vol, vol->root(), "g");
  gate->close();
  std::thread writer([&] { (void)write_at(*vol, g, 0, pattern(4096, 2)); });
  ASSERT_TRUE(gate->wait_for_writer(std::chrono::seconds(10)));
  std::atomic<bool> abandoned{false};
  std::thread abandoner([&] {
    vol->abandon();
    abandoned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(abandoned.load()) << "abandon() returned while a group was still being written";
  gate->open();
  writer.join();
  abandoner.join();
  EXPECT_TRUE(abandoned.load());
}

TEST(LfsWritePath, WritersPastTheHardMarkLeaveTheFlushToTheBackgroundThread) {
  ScratchDir dir;
  LfsOptions opts = small_options(dir.path(), 128ull << 20);
  opts.cache_bytes = 4ull << 20;  // hard mark: 2 MiB of dirty blocks
  opts.background_threads = true;
  opts.flush_interval_ms = 60000;  // only pokes start a pass
  auto gate = std::make_shared<HoldingGate>();
  opts.write_gate = gate;
  auto vol = make_volume(opts);
  ASSERT_TRUE(vol);
  InodeId f = create_file(*vol, vol->root(), "f");
  gate->forget_writers();
  // 12 MiB of UNSTABLE data in 64 KiB writes: six times the hard mark.
  const std::vector<uint8_t> chunk = pattern(64 << 10, 5);
  for (uint64_t off = 0; off < (12ull << 20); off += chunk.size())
    ASSERT_EQ(write_at(*vol, f, off, chunk, Stability::Unstable), Status::Ok);
  const std::set<std::thread::id> writers = gate->writers();
  EXPECT_FALSE(writers.empty()) << "nothing was flushed";
  EXPECT_EQ(writers.count(std::this_thread::get_id()), 0u)
      << "a client's WRITE flushed the cache itself";
  for (uint64_t off = 0; off < (12ull << 20); off += 3ull << 20)
    EXPECT_EQ(read_at(*vol, f, off, uint32_t(chunk.size())), chunk) << off;
  ASSERT_EQ(vol->close(), Status::Ok);
}

}  // namespace
}  // namespace nasd::fs::lfs::testing
