// Big directories: 120k entries with O(1) lookups, readdir cookies that survive inserts and
// removes between pages, and a directory that reloads intact after a crash.
#include <chrono>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "fs/lfs/directory.h"
#include "fs/lfs/fsck.h"
#include "tests/fs/test_volume.h"

namespace nasd::fs::lfs::testing {
namespace {

constexpr int kEntries = 120000;

class BigDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    opts_ = small_options(dir_.path(), 512ull << 20, 1ull << 20);
    opts_.cache_bytes = 64ull << 20;
    vol_ = make_volume(opts_);
    ASSERT_TRUE(vol_);
    big_ = make_dir(*vol_, vol_->root(), "big");
  }
  // Journalled calls: namespace ops are not synced one by one (the journal would have them).
  Status journalled(call::CallArgs args) {
    return apply_journalled_for_testing(*vol_, ++seq_, std::move(args)).status;
  }
  Status add(const std::string& name) {
    return journalled(call::CreateArgs{big_, name, CreateMode::Guarded, SetAttr{}, 0});
  }
  Status del(const std::string& name) { return journalled(call::RemoveArgs{big_, name}); }
  static std::string name(int i) { return "file-with-a-longish-name-" + std::to_string(i); }

  ScratchDir dir_;
  LfsOptions opts_;
  std::unique_ptr<LfsVolume> vol_;
  InodeId big_;
  uint64_t seq_ = 0;
};

TEST_F(BigDirTest, ManyEntriesStableCookiesAndRecovery) {
  for (int i = 0; i < kEntries; i++) ASSERT_EQ(add(name(i)), Status::Ok) << i;
  EXPECT_EQ(add(name(77)), Status::Exist);
  // Lookups stay fast: hashed buckets, not a scan.
  auto t0 = std::chrono::steady_clock::now();
  std::mt19937 rng(1);
  for (int i = 0; i < 20000; i++) {
    InodeId id;
    ASSERT_EQ(lookup(*vol_, big_, name(int(rng() % kEntries)), &id), Status::Ok);
  }
  double per_lookup_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
      20000;
  EXPECT_LT(per_lookup_us, 200.0);
  InodeId none;
  EXPECT_EQ(lookup(*vol_, big_, "absent", &none), Status::NoEnt);

  // Page through while entries are inserted and removed between pages. Every entry that exists
  // for the whole listing must show up exactly once.
  std::set<std::string> removed, seen;
  int next_new = kEntries;
  uint64_t cookie = 0, verf = 0;
  bool eof = false;
  for (int page = 0; page < 100000 && !eof; page++) {
    ReaddirResult r;
    ASSERT_EQ(vol_->readdir(root_ctx(), big_, cookie, verf, 700, false, &r), Status::Ok);
    for (auto& e : r.entries) {
      ASSERT_TRUE(seen.insert(e.name).second) << "listed twice: " << e.name;
      cookie = e.cookie;
    }
    verf = r.cookieverf;
    eof = r.eof;
    for (int k = 0; k < 5; k++) {
      std::string victim = name(int(rng() % kEntries));
      if (!removed.count(victim) && del(victim) == Status::Ok) removed.insert(victim);
      ASSERT_EQ(add(name(next_new++)), Status::Ok);
    }
    // Removing the very entry the cookie points at must not break resumption.
    if (!r.entries.empty() && r.entries.back().name != "." && r.entries.back().name != "..") {
      std::string last = r.entries.back().name;
      if (!removed.count(last) && del(last) == Status::Ok) removed.insert(last);
    }
  }
  ASSERT_TRUE(eof);
  for (int i = 0; i < kEntries; i++) {
    if (!removed.count(name(i))) {
      ASSERT_TRUE(seen.count(name(i))) << "missed " << name(i);
    }
  }

  Attr a = getattr(*vol_, big_);
  uint64_t expected = uint64_t(next_new) - removed.size();
  EXPECT_EQ(vol_->store_for_testing().imap().live_count(), expected + 2);  // + root + big
  EXPECT_GT(a.size, 1000u * 4096);
  uint64_t durable = 0;
  ASSERT_EQ(vol_->flush(&durable), Status::Ok);
  EXPECT_EQ(durable, seq_);

  // Entries added while paging are all there, even once the cache had to re-read them.
  InodeId id;
  for (int k = kEntries; k < next_new; k++) {
    if (removed.count(name(k))) continue;
    ASSERT_EQ(lookup(*vol_, big_, name(k), &id), Status::Ok) << name(k);
  }
  // Crash, recover, check structure and a few names.
  vol_.reset();
  FsckReport rep = fsck_volume(opts_);
  EXPECT_TRUE(rep.error.empty()) << rep.error;
  for (size_t i = 0; i < rep.problems.size() && i < 10; i++) ADD_FAILURE() << rep.problems[i];
  vol_ = reopen(opts_);
  EXPECT_EQ(lookup(*vol_, big_, name(next_new - 1), &id), Status::Ok);
  std::string gone = *removed.begin();
  EXPECT_EQ(lookup(*vol_, big_, gone, &id), Status::NoEnt);
}

TEST(DirectoryCookies, HashKeysAreStableAndValid) {
  EXPECT_TRUE(is_entry_cookie(kFirstEntryCookie));
  EXPECT_FALSE(is_entry_cookie(3));
  EXPECT_FALSE(is_entry_cookie(UINT64_MAX));
  EXPECT_EQ(name_hash("abc"), name_hash("abc"));
  EXPECT_NE(name_hash("abc"), name_hash("abd"));
  // Top bits spread (they choose the bucket).
  std::set<uint32_t> tops;
  for (int i = 0; i < 1000; i++) tops.insert(name_hash("f" + std::to_string(i)) >> 28);
  EXPECT_EQ(tops.size(), 16u);
}

}  // namespace
}  // namespace nasd::fs::lfs::testing
