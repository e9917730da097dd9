// LfsVolume's read path (lfs_read_path.cc): GETATTR, LOOKUP, ACCESS, READ, READLINK,
// READDIR(PLUS) and FSSTAT under the shared lock from memory, the non-blocking try_* attempts the NFS server runs on its event loop, and
// the fall back to the exclusive lock when the disk is needed.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "fs/lfs/write_gate.h"
#include "tests/fs/test_volume.h"

namespace nasd::fs::lfs::testing {
namespace {

// Holds every batch of writes at enter() while closed: a flush then keeps the volume's
// exclusive lock for as long as the test wants.
class HoldingGate : public WriteGate {
 public:
  bool enter() override {
    std::unique_lock<std::mutex> lk(mu_);
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

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int held_ = 0;  // batches that met the gate closed
};

TEST(LfsReadPath, TryCallsAnswerFromMemoryAndRefuseWhatNeedsTheDisk) {
  ScratchDir dir;
  LfsOptions opts = small_options(dir.path());
  InodeId d, f;
  {
    auto vol = make_volume(opts);
    d = make_dir(*vol, vol->root(), "d");
    f = create_file(*vol, d, "f");
    ASSERT_EQ(write_at(*vol, f, 0, pattern(3 * 4096, 7)), Status::Ok);
    ASSERT_EQ(vol->close(), Status::Ok);
  }
  auto vol = reopen(opts);  // nothing but the inode map is in memory now
  ASSERT_TRUE(vol);
  const OpContext ctx = root_ctx();
  Attr attr;
  EXPECT_FALSE(vol->try_getattr(ctx, f, &attr)) << "an uncached inode was answered";
  ASSERT_EQ(vol->getattr(ctx, f, &attr), Status::Ok);
  Attr again;
  ASSERT_EQ(vol->try_getattr(ctx, f, &again), std::optional<Status>(Status::Ok));
  EXPECT_EQ(again.size, attr.size);
  EXPECT_EQ(again.fileid, attr.fileid);

  std::vector<uint8_t> data;
  bool eof = false;
  std::optional<Attr> a;
  EXPECT_FALSE(vol->try_read(ctx, f, 4096, 8192, &data, &eof, &a)) << "uncached blocks were read";
  const std::vector<uint8_t> written = pattern(3 * 4096, 7);
  EXPECT_EQ(read_at(*vol, f, 4096, 8192), std::vector<uint8_t>(written.begin() + 4096, written.end()));
  ASSERT_EQ(vol->try_read(ctx, f, 4096, 8192, &data, &eof, &a), std::optional<Status>(Status::Ok));
  EXPECT_EQ(data, read_at(*vol, f, 4096, 8192));
  EXPECT_TRUE(eof);
  // An uncached block of a cached file is still the disk's business.
  EXPECT_FALSE(vol->try_read(ctx, f, 0, 100, &data, &eof, &a));

  InodeId found;
  std::optional<Attr> obj, dir_attr;
  EXPECT_FALSE(vol->try_lookup(ctx, vol->root(), "d", &found, &obj, &dir_attr));
  ASSERT_EQ(lookup(*vol, vol->root(), "d", &found), Status::Ok);
  ASSERT_EQ(vol->try_lookup(ctx, vol->root(), "d", &found, &obj, &dir_attr),
            std::optional<Status>(Status::Ok));
  EXPECT_EQ(found, d);
  ASSERT_TRUE(obj && dir_attr);
  EXPECT_EQ(obj->type, FileType::Dir);
  // A name that is not there is an answer too, once the directory's blocks are in memory.
  EXPECT_EQ(vol->try_lookup(ctx, vol->root(), "nope", &found, &obj, &dir_attr),
            std::optional<Status>(Status::NoEnt));

  uint32_t granted = 0;
  ASSERT_EQ(vol->try_access(ctx, f, kAccessRead | kAccessModify, &granted, &a),
            std::optional<Status>(Status::Ok));
  EXPECT_EQ(granted, kAccessRead | kAccessModify);
  // Errors are answered like the blocking call's.
  EXPECT_EQ(vol->try_getattr(ctx, InodeId{f.ino, f.gen + 1}, &attr),
            std::optional<Status>(Status::Stale));
  vol->close();
  // A closed volume refuses reads the same way on both paths: ask again (Jukebox), the volume
  // is served elsewhere now.
  EXPECT_EQ(vol->try_getattr(ctx, f, &attr), std::optional<Status>(Status::Jukebox));
  EXPECT_EQ(vol->getattr(ctx, f, &attr), Status::Jukebox);
}

// What a listing says, entry by entry, for comparing the attempt with the blocking call.
std::vector<std::string> listing_of(const ReaddirResult& r) {
  std::vector<std::string> out;
  for (const DirEntry& e : r.entries)
    out.push_back(e.name + " " + std::to_string(e.fileid) + " " + std::to_string(e.cookie) + " " +
                  std::to_string(e.id.gen) + " " +
                  (e.attr ? std::to_string(e.attr->size) + "/" + std::to_string(e.attr->mode)
                          : std::string("-")));
  out.push_back(std::to_string(r.cookieverf) + (r.eof ? " eof" : " more"));
  return out;
}

TEST(LfsReadPath, ReadlinkReaddirAndFsstatAttemptsAnswerFromMemoryAsTheBlockingCallsDo) {
  ScratchDir dir;
  LfsOptions opts = small_options(dir.path());
  InodeId d, link;
  {
    auto vol = make_volume(opts);
    d = make_dir(*vol, vol->root(), "d");
    for (int i = 0; i < 40; i++) create_file(*vol, d, "f" + std::to_string(i));
    std::optional<Attr> obj;
    Wcc wcc;
    ASSERT_EQ(vol->symlink(root_ctx(), d, "l", "f7/../target", SetAttr{}, &link, &obj, &wcc),
              Status::Ok);
    ASSERT_EQ(vol->close(), Status::Ok);
  }
  auto vol = reopen(opts);  // cold: nothing of d is in memory
  ASSERT_TRUE(vol);
  const OpContext ctx = root_ctx();
  for (bool plus : {false, true}) {
    ReaddirResult tried;
    EXPECT_FALSE(vol->try_readdir(ctx, d, 0, 0, 1000, plus, &tried))
        << "an uncached directory was listed";
  }
  std::string target;
  std::optional<Attr> attr;
  EXPECT_FALSE(vol->try_readlink(ctx, link, &target, &attr)) << "an uncached symlink was read";

  // Once the blocking calls brought everything in, the attempts answer the same, page by page.
  for (bool plus : {false, true}) {
    uint64_t cookie = 0, verf = 0;
    for (int page = 0; page < 20; page++) {
      ReaddirResult blocking, tried;
      ASSERT_EQ(vol->readdir(ctx, d, cookie, verf, 16, plus, &blocking), Status::Ok);
      ASSERT_EQ(vol->try_readdir(ctx, d, cookie, verf, 16, plus, &tried),
                std::optional<Status>(Status::Ok));
      EXPECT_EQ(listing_of(tried), listing_of(blocking)) << "page " << page;
      ASSERT_TRUE(tried.dir_attr);
      if (blocking.eof) break;
      cookie = blocking.entries.back().cookie;
      verf = blocking.cookieverf;
    }
  }
  // Its errors too: a bad cookie verifier, and a file is not a directory.
  ReaddirResult r;
  EXPECT_EQ(vol->try_readdir(ctx, d, 1u << 30, 12345, 16, false, &r),
            std::optional<Status>(vol->readdir(ctx, d, 1u << 30, 12345, 16, false, &r)));
  InodeId f0;
  ASSERT_EQ(lookup(*vol, d, "f0", &f0), Status::Ok);
  EXPECT_EQ(vol->try_readdir(ctx, f0, 0, 0, 16, false, &r),
            std::optional<Status>(Status::NotDir));

  ASSERT_EQ(vol->readlink(ctx, link, &target, &attr), Status::Ok);
  std::string tried_target;
  std::optional<Attr> tried_attr;
  ASSERT_EQ(vol->try_readlink(ctx, link, &tried_target, &tried_attr),
            std::optional<Status>(Status::Ok));
  EXPECT_EQ(tried_target, "f7/../target");
  ASSERT_TRUE(tried_attr);
  EXPECT_EQ(tried_attr->type, FileType::Lnk);
  EXPECT_EQ(vol->try_readlink(ctx, f0, &tried_target, &tried_attr),
            std::optional<Status>(Status::Inval));

  FsStat blocking_stat, tried_stat;
  std::optional<Attr> a1, a2;
  ASSERT_EQ(vol->fsstat(ctx, d, &blocking_stat, &a1), Status::Ok);
  ASSERT_EQ(vol->try_fsstat(ctx, d, &tried_stat, &a2), std::optional<Status>(Status::Ok));
  EXPECT_EQ(tried_stat.total_bytes, blocking_stat.total_bytes);
  EXPECT_EQ(tried_stat.free_bytes, blocking_stat.free_bytes);
  EXPECT_EQ(tried_stat.free_files, blocking_stat.free_files);
  EXPECT_EQ(tried_stat.total_files, blocking_stat.total_files);
  ASSERT_TRUE(a2);
  EXPECT_EQ(a2->fileid, a1->fileid);
  vol->close();
  EXPECT_EQ(vol->try_readdir(ctx, d, 0, 0, 16, false, &r), std::optional<Status>(Status::Jukebox));
  EXPECT_EQ(vol->try_fsstat(ctx, d, &tried_stat, &a2), std::optional<Status>(Status::Jukebox));
}

TEST(LfsReadPath, TryCallsNeverWaitForTheLockAndBlockingReadsStillFinish) {
  ScratchDir dir;
  LfsOptions opts = small_options(dir.path());
  auto gate = std::make_shared<HoldingGate>();
  opts.write_gate = gate;
  auto vol = make_volume(opts);
  ASSERT_TRUE(vol);
  InodeId f = create_file(*vol, vol->root(), "f");
  InodeId g = create_file(*vol, vol->root(), "g");
  ASSERT_EQ(write_at(*vol, f, 0, pattern(4096, 1)), Status::Ok);
  const OpContext ctx = root_ctx();
  Attr attr;
  ASSERT_EQ(vol->try_getattr(ctx, f, &attr), std::optional<Status>(Status::Ok));

  ASSERT_EQ(write_at(*vol, g, 0, pattern(4096, 2), Stability::Unstable), Status::Ok);
  gate->close();
  // A checkpoint keeps the exclusive lock through its device writes and stops in the gate.
  // (A plain flush lets readers in while it writes: tests/fs/write_path_test.cc.)
  std::thread writer([&] { EXPECT_EQ(vol->checkpoint_now(), Status::Ok); });
  ASSERT_TRUE(gate->wait_for_writer(std::chrono::seconds(10)));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(vol->try_getattr(ctx, f, &attr)) << "answered while a writer held the lock";
  std::vector<uint8_t> data;
  bool eof;
  std::optional<Attr> a;
  EXPECT_FALSE(vol->try_read(ctx, f, 0, 4096, &data, &eof, &a));
  ReaddirResult listing;
  EXPECT_FALSE(vol->try_readdir(ctx, vol->root(), 0, 0, 100, true, &listing));
  FsStat stat;
  EXPECT_FALSE(vol->try_fsstat(ctx, vol->root(), &stat, &a));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1))
      << "a non-blocking attempt waited";
  std::thread reader([&] {
    EXPECT_EQ(read_at(*vol, f, 0, 4096), pattern(4096, 1));
    ReaddirResult all;
    EXPECT_EQ(vol->readdir(ctx, vol->root(), 0, 0, 100, true, &all), Status::Ok);
    EXPECT_EQ(all.entries.size(), 4u);  // ., .., f, g
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  gate->open();
  writer.join();
  reader.join();
  ASSERT_EQ(vol->try_getattr(ctx, g, &attr), std::optional<Status>(Status::Ok));
  EXPECT_EQ(attr.size, 4096u);
  vol->close();
}

TEST(LfsReadPath, ReadWithAtimeOnNeverRunsAsAnAttempt) {
  ScratchDir dir;
  LfsOptions opts = small_options(dir.path());
  opts.atime = true;
  auto vol = make_volume(opts);
  ASSERT_TRUE(vol);
  InodeId f = create_file(*vol, vol->root(), "f");
  ASSERT_EQ(write_at(*vol, f, 0, pattern(100, 3)), Status::Ok);
  const OpContext ctx = root_ctx();
  EXPECT_EQ(read_at(*vol, f, 0, 100), pattern(100, 3));
  std::vector<uint8_t> data;
  bool eof;
  std::optional<Attr> a;
  EXPECT_FALSE(vol->try_read(ctx, f, 0, 100, &data, &eof, &a)) << "a READ that sets atime ran shared";
  Attr attr;
  EXPECT_EQ(vol->try_getattr(ctx, f, &attr), std::optional<Status>(Status::Ok));
  vol->close();
}

// Readers of one file under the shared lock, and their attempts, while writers change other
// files and the cache evicts: every read sees exactly the data written before the race began.
TEST(LfsReadPath, SharedReadersSeeConsistentDataWhileOthersWrite) {
  ScratchDir dir;
  LfsOptions opts = small_options(dir.path());
  opts.cache_bytes = 4ull << 20;  // small: the writers make the cache evict
  auto vol = make_volume(opts);
  ASSERT_TRUE(vol);
  InodeId steady = create_file(*vol, vol->root(), "steady");
  const std::vector<uint8_t> contents = pattern(16 * 4096, 9);
  ASSERT_EQ(write_at(*vol, steady, 0, contents), Status::Ok);
  std::vector<InodeId> busy;
  for (int i = 0; i < 2; i++) busy.push_back(create_file(*vol, vol->root(), "w" + std::to_string(i)));
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0}, answered{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; w++)
    threads.emplace_back([&, w] {
      for (int i = 0; i < 300 && !stop; i++) {
        Stability s = i % 10 == 0 ? Stability::FileSync : Stability::Unstable;
        if (write_at(*vol, busy[w], uint64_t(i % 64) * 4096, pattern(4096, i), s) != Status::Ok)
          bad++;
      }
    });
  for (int r = 0; r < 2; r++)
    threads.emplace_back([&, r] {
      const OpContext ctx = root_ctx();
      for (int i = 0; i < 400; i++) {
        const uint64_t off = uint64_t((i * 7 + r) % 16) * 4096;
        std::vector<uint8_t> data;
        bool eof;
        std::optional<Attr> a;
        if (auto st = vol->try_read(ctx, steady, off, 4096, &data, &eof, &a)) {
          answered++;
          if (*st != Status::Ok || !std::equal(data.begin(), data.end(), contents.begin() + off) ||
              data.size() != 4096)
            bad++;
        }
        if (read_at(*vol, steady, off, 4096) !=
            std::vector<uint8_t>(contents.begin() + off, contents.begin() + off + 4096))
          bad++;
        InodeId found;
        if (lookup(*vol, vol->root(), "steady", &found) != Status::Ok || !(found == steady)) bad++;
        // The root's listing never changes during the race: both paths see all 5 entries.
        ReaddirResult listing;
        if (vol->readdir(ctx, vol->root(), 0, 0, 100, true, &listing) != Status::Ok ||
            listing.entries.size() != 5 || !listing.eof)
          bad++;
        if (auto st = vol->try_readdir(ctx, vol->root(), 0, 0, 100, true, &listing)) {
          answered++;
          if (*st != Status::Ok || listing.entries.size() != 5) bad++;
        }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(answered.load(), 0) << "no attempt was ever answered";
  vol->close();
}

}  // namespace
}  // namespace nasd::fs::lfs::testing

namespace nasd::fs::lfs::testing {
namespace {

std::vector<uint8_t> bytes_of(const util::ByteSlices& s) {
  std::vector<uint8_t> out;
  s.copy_to(&out);
  return out;
}

// READ without the copy (try_read_shared): the reply refers to the cache blocks themselves.
// Whatever happens to the file afterwards -- an overwrite in place, a truncate, the blocks'
// eviction, the volume closing -- the bytes a reply holds stay those it read, and a pin lets its
// buffer go back to the pool only when the reply is dropped.
TEST(LfsReadPath, SharedReadPinsBlocksThatLaterWritesAndEvictionsLeaveAlone) {
  ScratchDir dir;
  LfsOptions opts = small_options(dir.path());
  opts.cache_bytes = 4ull << 20;  // small: the filler below evicts every block of `f`
  auto vol = make_volume(opts);
  ASSERT_TRUE(vol);
  const OpContext ctx = root_ctx();
  InodeId f = create_file(*vol, vol->root(), "f");
  const std::vector<uint8_t> first = pattern(3 * 4096 + 100, 1);
  ASSERT_EQ(write_at(*vol, f, 0, first, Stability::Unstable), Status::Ok);  // dirty blocks

  util::ByteSlices held;
  bool eof = false;
  std::optional<Attr> a;
  ASSERT_EQ(vol->try_read_shared(ctx, f, 10, 3 * 4096, &held, &eof, &a),
            std::optional<Status>(Status::Ok));
  const std::vector<uint8_t> expect(first.begin() + 10, first.begin() + 10 + 3 * 4096);
  ASSERT_EQ(bytes_of(held), expect);
  EXPECT_FALSE(eof);
  ASSERT_TRUE(held.owner);
  // Not a copy: the pieces lie in the cache's block buffers (4 KiB apart at most per piece).
  for (auto part : held.parts) EXPECT_LE(part.size(), 3 * 4096u);

  // Overwrite in place (same blocks, partly and wholly), then read through the cache.
  ASSERT_EQ(write_at(*vol, f, 0, pattern(3 * 4096 + 100, 2), Stability::Unstable), Status::Ok);
  ASSERT_EQ(write_at(*vol, f, 4100, pattern(50, 9), Stability::Unstable), Status::Ok);
  EXPECT_EQ(bytes_of(held), expect) << "a write changed the bytes of a reply being sent";
  std::vector<uint8_t> now = pattern(3 * 4096 + 100, 2);
  std::copy_n(pattern(50, 9).begin(), 50, now.begin() + 4100);
  EXPECT_EQ(read_at(*vol, f, 0, 3 * 4096 + 100), now);

  // A second reader pins the new bytes; a truncate and a cache's worth of other data (flushed,
  // evicted) later, both still see what they read.
  util::ByteSlices second;
  ASSERT_EQ(vol->try_read_shared(ctx, f, 0, 8192, &second, &eof, &a),
            std::optional<Status>(Status::Ok));
  EXPECT_EQ(bytes_of(second), std::vector<uint8_t>(now.begin(), now.begin() + 8192));
  SetAttr sa;
  sa.size = 0;
  Wcc w;
  ASSERT_EQ(vol->setattr(ctx, f, sa, std::nullopt, &w), Status::Ok);
  InodeId g = create_file(*vol, vol->root(), "filler");
  for (int i = 0; i < 4; i++)
    ASSERT_EQ(write_at(*vol, g, uint64_t(i) << 21, pattern(2 << 20, uint8_t(i))), Status::Ok);
  EXPECT_EQ(bytes_of(held), expect);
  EXPECT_EQ(bytes_of(second), std::vector<uint8_t>(now.begin(), now.begin() + 8192));

  // A hole reads as zeroes that are no block at all.
  InodeId h = create_file(*vol, vol->root(), "holey");
  ASSERT_EQ(write_at(*vol, h, 8192, pattern(10, 4)), Status::Ok);
  util::ByteSlices holey;
  ASSERT_EQ(vol->try_read_shared(ctx, h, 0, 8192 + 10, &holey, &eof, &a),
            std::optional<Status>(Status::Ok));
  std::vector<uint8_t> want(8192, 0);
  for (uint8_t b : pattern(10, 4)) want.push_back(b);
  EXPECT_EQ(bytes_of(holey), want);
  EXPECT_TRUE(eof);

  // The pins outlive the volume; dropping them afterwards is safe (the pool is shared).
  ASSERT_EQ(vol->close(), Status::Ok);
  vol.reset();
  EXPECT_EQ(bytes_of(held), expect);
  held.clear();
  second.clear();
}

// Pins are counted: once every reply is dropped, the cache's buffers all go back to the pool
// (none leaks as "pinned" forever, none is freed twice).
TEST(LfsReadPath, DroppedPinsGiveEveryBufferBack) {
  ScratchDir dir;
  LfsOptions opts = small_options(dir.path());
  auto vol = make_volume(opts);
  ASSERT_TRUE(vol);
  const OpContext ctx = root_ctx();
  InodeId f = create_file(*vol, vol->root(), "f");
  ASSERT_EQ(write_at(*vol, f, 0, pattern(64 * 4096, 5)), Status::Ok);
  std::vector<util::ByteSlices> replies(8);
  bool eof;
  std::optional<Attr> a;
  for (auto& r : replies)
    ASSERT_EQ(vol->try_read_shared(ctx, f, 0, 64 * 4096, &r, &eof, &a),
              std::optional<Status>(Status::Ok));
  const BlockCache& cache = vol->store_for_testing().block_cache();
  EXPECT_EQ(cache.pool().in_use(), cache.size()) << "pinning took buffers";
  // Overwrite everything while pinned: every block moves to a buffer of its own, and the pinned
  // ones stay out of the pool.
  ASSERT_EQ(write_at(*vol, f, 0, pattern(64 * 4096, 6)), Status::Ok);
  for (auto& r : replies) EXPECT_EQ(bytes_of(r), pattern(64 * 4096, 5));
  EXPECT_GE(cache.pool().in_use(), cache.size() + 64);
  replies.clear();
  EXPECT_EQ(cache.pool().in_use(), cache.size()) << "a dropped pin kept its buffer";
  EXPECT_EQ(read_at(*vol, f, 0, 64 * 4096), pattern(64 * 4096, 6));
  vol->close();
}

}  // namespace
}  // namespace nasd::fs::lfs::testing
