// Zero-copy WRITE at the volume: whole, aligned blocks of a WRITE's data that lie in the call
// record lent to the thread (util::LentPageRun) become the cached blocks themselves; everything
// else is copied as before. The bytes must survive the record's release, later overwrites, a
// READ reply pinning the old block, the flush and a reopen.
#include <cstring>

#include "tests/fs/test_volume.h"
#include "util/page_run.h"

namespace nasd::fs::lfs::testing {
namespace {

using util::PageRun;
using util::PageRunRef;

constexpr size_t kPage = PageRun::kPageSize;

// A call record in a run: 100 bytes of header, then the payload from the next page on.
struct LentRecord {
  PageRunRef run;
  std::span<uint8_t> payload;
  explicit LentRecord(const std::vector<uint8_t>& data)
      : run(PageRun::acquire(kPage + data.size())) {
    std::memset(run.get()->data() + kPage - 100, 0x5A, 100);
    payload = {run.get()->data() + kPage, data.size()};
    std::memcpy(payload.data(), data.data(), data.size());
  }
};

Status write_lent(LfsVolume& v, InodeId f, uint64_t off, std::span<const uint8_t> data,
                  PageRun* lent) {
  util::LentPageRun scope(lent);
  Stability got;
  Wcc w;
  return v.write(root_ctx(), f, off, data, Stability::Unstable, &got, &w);
}

TEST(ZeroCopyWrite, WholeAlignedBlocksOfALentRecordBecomeTheCachedBlocks) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path());
  const auto data = pattern(16 * kPage, 1);
  {
    auto vol = make_volume(o);
    InodeId f = create_file(*vol, vol->root(), "f");
    LentRecord rec(data);
    PageRun* run = rec.run.get();
    ASSERT_EQ(write_lent(*vol, f, 0, rec.payload, run), Status::Ok);
    EXPECT_EQ(vol->report().block_cache_adoptions, 16u);
    EXPECT_EQ(run->refs(), 17u) << "the record's reference and one per adopted block";

    // The call ends: its record goes, the blocks keep the pages (the run is not reused).
    rec.run.reset();
    EXPECT_EQ(run->refs(), 16u);
    PageRunRef other(PageRun::acquire(kPage + data.size()));
    EXPECT_NE(other.get(), run);
    std::memset(other.get()->data(), 0xEE, other.get()->capacity());
    EXPECT_EQ(read_at(*vol, f, 0, data.size()), data);

    // An ordinary overwrite of an adopted block changes the file, not anything else.
    const auto patch = pattern(kPage, 2);
    ASSERT_EQ(write_at(*vol, f, 3 * kPage, patch, Stability::Unstable), Status::Ok);
    auto expect = data;
    std::copy(patch.begin(), patch.end(), expect.begin() + 3 * kPage);
    EXPECT_EQ(read_at(*vol, f, 0, data.size()), expect);
    ASSERT_EQ(vol->close(), Status::Ok);

    auto again = reopen(o);
    EXPECT_EQ(read_at(*again, f, 0, data.size()), expect) << "lost by the flush";
    ASSERT_EQ(again->close(), Status::Ok);
  }
}

// The last block leaving the cache gives the run back to its pool.
TEST(ZeroCopyWrite, TheRunGoesBackWhenTheLastAdoptedBlockLeavesTheCache) {
  ScratchDir dir;
  LfsOptions o = small_options(dir.path());
  const auto data = pattern(7 * kPage, 3);  // a size no other test's run has
  auto vol = make_volume(o);
  InodeId f = create_file(*vol, vol->root(), "f");
  LentRecord rec(data);
  PageRun* run = rec.run.get();
  ASSERT_EQ(write_lent(*vol, f, 0, rec.payload, run), Status::Ok);
  rec.run.reset();
  const size_t pooled = PageRun::pooled_bytes();
  ASSERT_EQ(vol->close(), Status::Ok);
  vol.reset();  // the cache and its blocks go
  EXPECT_EQ(PageRun::pooled_bytes(), pooled + run->capacity());
}

// Rewriting a file with new WRITEs frees the earlier WRITEs' runs as soon as all their pages
// are replaced, so a steady rewrite reuses warm runs instead of fresh memory.
TEST(ZeroCopyWrite, ARewrittenRunGoesBackToThePool) {
  ScratchDir dir;
  auto vol = make_volume(small_options(dir.path()));
  InodeId f = create_file(*vol, vol->root(), "f");
  const auto first = pattern(9 * kPage, 8), second = pattern(9 * kPage, 9);
  LentRecord a(first);
  PageRun* run_a = a.run.get();
  ASSERT_EQ(write_lent(*vol, f, 0, a.payload, run_a), Status::Ok);
  a.run.reset();
  EXPECT_EQ(run_a->refs(), 9u);
  const size_t pooled = PageRun::pooled_bytes();
  LentRecord b(second);
  ASSERT_EQ(write_lent(*vol, f, 0, b.payload, b.run.get()), Status::Ok);
  EXPECT_EQ(PageRun::pooled_bytes(), pooled + run_a->capacity()) << "the first run was kept";
  EXPECT_EQ(read_at(*vol, f, 0, second.size()), second);
}

// Only whole, page-aligned blocks of the lent run are adopted: a WRITE at an unaligned offset,
// data outside the run, or no run lent at all are copied.
TEST(ZeroCopyWrite, EverythingElseIsCopied) {
  ScratchDir dir;
  auto vol = make_volume(small_options(dir.path()));
  InodeId f = create_file(*vol, vol->root(), "f");
  const auto data = pattern(4 * kPage, 4);
  LentRecord rec(data);

  ASSERT_EQ(write_lent(*vol, f, 100, rec.payload, rec.run.get()), Status::Ok);
  ASSERT_EQ(write_lent(*vol, f, 8 * kPage, rec.payload.subspan(1), rec.run.get()), Status::Ok);
  ASSERT_EQ(write_lent(*vol, f, 16 * kPage, data, rec.run.get()), Status::Ok);
  ASSERT_EQ(write_lent(*vol, f, 24 * kPage, rec.payload, nullptr), Status::Ok);
  EXPECT_EQ(vol->report().block_cache_adoptions, 0u);
  EXPECT_EQ(rec.run.get()->refs(), 1u);

  std::memset(rec.payload.data(), 0, rec.payload.size());  // the record is gone: garbage
  EXPECT_EQ(read_at(*vol, f, 100, data.size()), data);
  EXPECT_EQ(read_at(*vol, f, 8 * kPage, data.size() - 1),
            std::vector<uint8_t>(data.begin() + 1, data.end()));
  EXPECT_EQ(read_at(*vol, f, 16 * kPage, data.size()), data);
  EXPECT_EQ(read_at(*vol, f, 24 * kPage, data.size()), data);
}

// Past adoption's memory bound (runs holding far more than their cached pages) a WRITE copies.
TEST(ZeroCopyWrite, PastTheMemoryBoundTheDataIsCopied) {
  ScratchDir dir;
  auto vol = make_volume(small_options(dir.path()));
  InodeId f = create_file(*vol, vol->root(), "f");
  std::vector<PageRun*> sparse;  // runs of which one page each stays cached elsewhere
  while (PageRun::may_adopt() && sparse.size() < 1000) {
    sparse.push_back(PageRun::acquire(1u << 20));
    sparse.back()->ref_adopted();
    sparse.back()->unref();
  }
  const auto data = pattern(4 * kPage, 7);
  LentRecord rec(data);
  ASSERT_EQ(write_lent(*vol, f, 0, rec.payload, rec.run.get()), Status::Ok);
  EXPECT_EQ(vol->report().block_cache_adoptions, 0u);
  for (PageRun* run : sparse) run->unref_adopted();
  ASSERT_EQ(write_lent(*vol, f, 0, rec.payload, rec.run.get()), Status::Ok);
  EXPECT_EQ(vol->report().block_cache_adoptions, 4u);
  EXPECT_EQ(read_at(*vol, f, 0, data.size()), data);
}

// A READ reply still being sent from the old block keeps its bytes when a WRITE adopts a new
// page for that block.
TEST(ZeroCopyWrite, AReplyPinningTheOldBlockKeepsItsBytes) {
  ScratchDir dir;
  auto vol = make_volume(small_options(dir.path()));
  InodeId f = create_file(*vol, vol->root(), "f");
  const auto old_bytes = pattern(kPage, 5);
  ASSERT_EQ(write_at(*vol, f, 0, old_bytes, Stability::Unstable), Status::Ok);
  util::ByteSlices reply;
  bool eof;
  std::optional<Attr> attr;
  ASSERT_EQ(vol->try_read_shared(root_ctx(), f, 0, kPage, &reply, &eof, &attr), Status::Ok);

  const auto new_bytes = pattern(kPage, 6);
  LentRecord rec(new_bytes);
  ASSERT_EQ(write_lent(*vol, f, 0, rec.payload, rec.run.get()), Status::Ok);
  EXPECT_EQ(vol->report().block_cache_adoptions, 1u);
  std::vector<uint8_t> sent;
  for (auto part : reply.parts) sent.insert(sent.end(), part.begin(), part.end());
  EXPECT_EQ(sent, old_bytes);
  EXPECT_EQ(read_at(*vol, f, 0, kPage), new_bytes);
}

}  // namespace
}  // namespace nasd::fs::lfs::testing
