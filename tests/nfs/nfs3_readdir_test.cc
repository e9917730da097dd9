// NFS service: READDIR and READDIRPLUS paging, size budgets and cookies.
#include <set>

#include "tests/nfs/nfs3_test_ops.h"

namespace nasd::nfs::fixture {
namespace {

class Nfs3Readdir : public Nfs3Ops {
 protected:
  void SetUp() override {
    ASSERT_EQ(mkdir(root(), "dir", &dir_), NFS3_OK);
    for (int i = 0; i < kFiles; i++) {
      char name[32];
      snprintf(name, sizeof name, "file-%03d-with-a-longish-name", i);
      ASSERT_EQ(create(dir_, name), NFS3_OK);
    }
  }

  void readdir(uint64_t cookie, const char* verf, uint32_t count, Reply<READDIR3res>* r) {
    READDIR3args a{};
    a.dir = wire(dir_);
    a.cookie = cookie;
    if (verf) std::memcpy(a.cookieverf, verf, 8);
    a.count = count;
    call(NFSPROC3_READDIR, xdr_READDIR3args, a, xdr_READDIR3res, r);
  }

  void readdirplus(uint64_t cookie, const char* verf, uint32_t dircount, uint32_t maxcount,
                   Reply<READDIRPLUS3res>* r) {
    READDIRPLUS3args a{};
    a.dir = wire(dir_);
    a.cookie = cookie;
    if (verf) std::memcpy(a.cookieverf, verf, 8);
    a.dircount = dircount;
    a.maxcount = maxcount;
    call(NFSPROC3_READDIRPLUS, xdr_READDIRPLUS3args, a, xdr_READDIRPLUS3res, r);
  }

  static constexpr int kFiles = 100;
  FileHandle dir_;
};

TEST_F(Nfs3Readdir, PagesThroughEveryEntryWithinTheByteBudget) {
  std::set<std::string> seen;
  uint64_t cookie = 0;
  char verf[8] = {};
  bool eof = false;
  int pages = 0;
  const uint32_t count = 1024;
  while (!eof && pages < 100) {
    Reply<READDIR3res> r(xdr_READDIR3res);
    readdir(cookie, pages ? verf : nullptr, count, &r);
    ASSERT_EQ(r->status, NFS3_OK);
    // The reply the client decodes must fit the count it asked for.
    std::vector<uint8_t> encoded = encode(xdr_READDIR3res, *r.value);
    EXPECT_LE(encoded.size(), count);
    const READDIR3resok& ok = r->READDIR3res_u.resok;
    std::memcpy(verf, ok.cookieverf, 8);
    size_t n = 0;
    for (entry3* e = ok.reply.entries; e; e = e->nextentry, n++) {
      EXPECT_TRUE(seen.insert(e->name).second) << "duplicate " << e->name;
      cookie = e->cookie;
    }
    EXPECT_GT(n, 0u);
    eof = ok.reply.eof;
    pages++;
  }
  EXPECT_TRUE(eof);
  EXPECT_GT(pages, 3);  // the budget really split the listing
  EXPECT_EQ(seen.size(), kFiles + 2u);  // plus "." and ".."
}

TEST_F(Nfs3Readdir, LargeBudgetReturnsEverythingAndEof) {
  Reply<READDIR3res> r(xdr_READDIR3res);
  readdir(0, nullptr, 64 * 1024, &r);
  ASSERT_EQ(r->status, NFS3_OK);
  size_t n = 0;
  for (entry3* e = r->READDIR3res_u.resok.reply.entries; e; e = e->nextentry) n++;
  EXPECT_EQ(n, kFiles + 2u);
  EXPECT_TRUE(r->READDIR3res_u.resok.reply.eof);
  EXPECT_TRUE(r->READDIR3res_u.resok.dir_attributes.attributes_follow);
}

TEST_F(Nfs3Readdir, BudgetTooSmallForOneEntryIsTooSmall) {
  Reply<READDIR3res> r(xdr_READDIR3res);
  readdir(2, nullptr, 120, &r);  // after "." and "..": the first long name needs 60 bytes
  EXPECT_EQ(r->status, NFS3ERR_TOOSMALL);
  EXPECT_TRUE(r->READDIR3res_u.resfail.dir_attributes.attributes_follow);
}

TEST_F(Nfs3Readdir, StaleCookieVerifierIsBadCookie) {
  Reply<READDIR3res> r(xdr_READDIR3res);
  readdir(5, "wrongvf!", 4096, &r);
  EXPECT_EQ(r->status, NFS3ERR_BAD_COOKIE);
}

TEST_F(Nfs3Readdir, AsksTheVolumeForAboutAsManyEntriesAsCanFit) {
  Reply<READDIR3res> r(xdr_READDIR3res);
  readdir(0, nullptr, 4096, &r);
  ASSERT_EQ(r->status, NFS3_OK);
  EXPECT_GT(main_.last_readdir_max_entries(), 100u);  // ~ (4096 - 108) / 28
  EXPECT_LT(main_.last_readdir_max_entries(), 200u);
}

TEST_F(Nfs3Readdir, PlusCarriesUsableHandlesAndAttributes) {
  Reply<READDIRPLUS3res> r(xdr_READDIRPLUS3res);
  readdirplus(0, nullptr, 8192, 64 * 1024, &r);
  ASSERT_EQ(r->status, NFS3_OK);
  size_t n = 0;
  for (entryplus3* e = r->READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry, n++) {
    ASSERT_TRUE(e->name_handle.handle_follows);
    ASSERT_TRUE(e->name_attributes.attributes_follow);
    fattr3 attr{};
    ASSERT_EQ(getattr(from_wire(e->name_handle.post_op_fh3_u.handle), &attr), NFS3_OK) << e->name;
    EXPECT_EQ(attr.fileid, e->fileid);
    EXPECT_EQ(attr.fileid, e->name_attributes.post_op_attr_u.attributes.fileid);
  }
  EXPECT_GT(n, 0u);
}

TEST_F(Nfs3Readdir, PlusRespectsBothCounts) {
  // dircount allows few names.
  Reply<READDIRPLUS3res> small_dir(xdr_READDIRPLUS3res);
  readdirplus(0, nullptr, 200, 64 * 1024, &small_dir);
  ASSERT_EQ(small_dir->status, NFS3_OK);
  size_t n = 0;
  for (entryplus3* e = small_dir->READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry) n++;
  EXPECT_GE(n, 1u);
  EXPECT_LE(n, 200u / 28);
  EXPECT_FALSE(small_dir->READDIRPLUS3res_u.resok.reply.eof);

  // maxcount bounds the whole encoded reply.
  Reply<READDIRPLUS3res> small_max(xdr_READDIRPLUS3res);
  readdirplus(0, nullptr, 64 * 1024, 2048, &small_max);
  ASSERT_EQ(small_max->status, NFS3_OK);
  EXPECT_LE(encode(xdr_READDIRPLUS3res, *small_max.value).size(), 2048u);
  EXPECT_FALSE(small_max->READDIRPLUS3res_u.resok.reply.eof);

  Reply<READDIRPLUS3res> tiny(xdr_READDIRPLUS3res);
  readdirplus(0, nullptr, 64 * 1024, 200, &tiny);
  EXPECT_EQ(tiny->status, NFS3ERR_TOOSMALL);
}

TEST_F(Nfs3Readdir, ReaddirOfAFileIsNotDir) {
  FileHandle f;
  ASSERT_EQ(lookup(dir_, "file-000-with-a-longish-name", &f), NFS3_OK);
  READDIR3args a{};
  a.dir = wire(f);
  a.count = 4096;
  Reply<READDIR3res> r(xdr_READDIR3res);
  call(NFSPROC3_READDIR, xdr_READDIR3args, a, xdr_READDIR3res, &r);
  EXPECT_EQ(r->status, NFS3ERR_NOTDIR);
}

}  // namespace
}  // namespace nasd::nfs::fixture
