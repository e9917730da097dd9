// READDIR and READDIRPLUS over a directory too big for one reply: every name exactly once,
// cookies that resume where they say, and cookie verifiers that are checked.
#include <map>
#include <set>

#include "tests/e2e/e2e_fixture.h"

namespace nasd::e2e {
namespace {

constexpr int kEntries = 2000;
constexpr int kMaxCalls = 5000;  // bound on any listing loop

class ReaddirTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    dir_ = make_dir(root(), "big");
    for (int i = 0; i < kEntries; ++i) {
      // Varying lengths, so entries pack unevenly into replies.
      std::string name = "entry-" + std::to_string(i) + std::string(i % 37, 'x');
      NewObjectReply r = nfs().create(dir_, name, GUARDED, sattr_mode(0644));
      ASSERT_EQ(r.status, NFS3_OK) << name << ": " << st(r.status);
      expected_.insert(name);
    }
  }

  struct Listing {
    std::vector<DirEntry> entries;  // in server order, "." and ".." dropped
    int calls = 0;
    uint64_t cookieverf = 0;
  };

  // Pages through the whole directory from cookie 0.
  Listing list_all(bool plus, uint32_t count) {
    Listing out;
    uint64_t cookie = 0, verf = 0;
    for (;;) {
      if (++out.calls > kMaxCalls) {
        ADD_FAILURE() << "listing did not reach eof within " << kMaxCalls << " calls";
        return out;
      }
      ReaddirReply r = plus ? nfs().readdirplus(dir_, cookie, verf, count, count * 4)
                            : nfs().readdir(dir_, cookie, verf, count);
      if (r.status != NFS3_OK) {
        ADD_FAILURE() << "call " << out.calls << " at cookie " << cookie << ": " << st(r.status);
        return out;
      }
      EXPECT_TRUE(has_attrs(r.dir_attributes));
      verf = r.cookieverf;
      out.cookieverf = verf;
      for (DirEntry& e : r.entries) {
        cookie = e.cookie;
        if (e.name != "." && e.name != "..") out.entries.push_back(std::move(e));
      }
      if (r.eof) return out;
      if (r.entries.empty()) {
        ADD_FAILURE() << "a reply with no entries and no eof would loop forever";
        return out;
      }
    }
  }

  void expect_each_name_once(const Listing& l) {
    std::map<std::string, int> seen;
    for (const DirEntry& e : l.entries) ++seen[e.name];
    for (const auto& [name, n] : seen) {
      EXPECT_EQ(n, 1) << name << " listed " << n << " times";
      EXPECT_TRUE(expected_.count(name)) << "unexpected name " << name;
    }
    EXPECT_EQ(seen.size(), expected_.size()) << "names missing from the listing";
    EXPECT_GT(l.calls, 20) << "small counts should need many calls";
  }

  Fh dir_;
  std::set<std::string> expected_;
};

TEST_F(ReaddirTest, ReaddirSeesEveryNameOnce) {
  Listing l = list_all(false, 1024);
  expect_each_name_once(l);
  std::set<uint64_t> fileids;
  for (const DirEntry& e : l.entries) fileids.insert(e.fileid);
  EXPECT_EQ(fileids.size(), l.entries.size()) << "distinct files have distinct fileids";
}

TEST_F(ReaddirTest, ReaddirplusSeesEveryNameOnceWithHandlesAndAttributes) {
  Listing l = list_all(true, 1024);
  expect_each_name_once(l);
  int checked = 0;
  for (const DirEntry& e : l.entries) {
    ASSERT_TRUE(e.fh) << e.name << " has no handle";
    ASSERT_TRUE(has_attrs(e.attributes)) << e.name;
    EXPECT_EQ(e.attributes.post_op_attr_u.attributes.fileid, e.fileid) << e.name;
    if (++checked % 250 == 0) {  // the handles are real: look a sample up the ordinary way
      EXPECT_EQ(attrs_of(*e.fh).fileid, e.fileid) << e.name;
      EXPECT_EQ(nfs().lookup(dir_, e.name).fh, *e.fh) << e.name;
    }
  }
}

TEST_F(ReaddirTest, CookiesResumeWhereTheyPoint) {
  Listing full = list_all(false, 1024);
  ASSERT_EQ(full.entries.size(), static_cast<size_t>(kEntries));
  for (size_t k : {size_t{0}, size_t{777}, size_t{kEntries - 2}}) {
    SCOPED_TRACE("resume after entry " + std::to_string(k));
    ReaddirReply r = nfs().readdir(dir_, full.entries[k].cookie, full.cookieverf, 1024);
    ASSERT_EQ(r.status, NFS3_OK) << st(r.status);
    ASSERT_FALSE(r.entries.empty());
    EXPECT_EQ(r.entries[0].name, full.entries[k + 1].name);
  }
  ReaddirReply last = nfs().readdir(dir_, full.entries.back().cookie, full.cookieverf, 1024);
  ASSERT_EQ(last.status, NFS3_OK) << st(last.status);
  EXPECT_TRUE(last.entries.empty());
  EXPECT_TRUE(last.eof);
}

// A server that issues cookie verifiers must check them (RFC 1813 3.3.16); one that returns 0
// does not use them and may ignore what comes back.
TEST_F(ReaddirTest, WrongCookieVerifierIsBadCookie) {
  ReaddirReply first = nfs().readdir(dir_, 0, 0, 1024);
  ASSERT_EQ(first.status, NFS3_OK) << st(first.status);
  ASSERT_FALSE(first.eof);
  uint64_t cookie = first.entries.back().cookie;
  ReaddirReply bogus = nfs().readdir(dir_, cookie, first.cookieverf ^ 0x5a5a5a5a5a5a5a5aull, 1024);
  if (first.cookieverf != 0) {
    EXPECT_EQ(bogus.status, NFS3ERR_BAD_COOKIE) << st(bogus.status);
  } else {
    EXPECT_EQ(bogus.status, NFS3_OK) << "verifier 0 means the server ignores it";
  }
  ReaddirReply plus = nfs().readdirplus(dir_, cookie, first.cookieverf ^ 1, 1024, 4096);
  if (first.cookieverf != 0) {
    EXPECT_EQ(plus.status, NFS3ERR_BAD_COOKIE) << st(plus.status);
  }
}

TEST_F(ReaddirTest, TinyCountAndNonDirectory) {
  ReaddirReply tiny = nfs().readdir(dir_, 0, 0, 16);
  EXPECT_EQ(tiny.status, NFS3ERR_TOOSMALL) << "16 bytes cannot hold one entry: " << st(tiny.status);
  Fh f = make_file(root(), "plain");
  EXPECT_EQ(nfs().readdir(f, 0, 0, 1024).status, NFS3ERR_NOTDIR);
  EXPECT_EQ(nfs().readdirplus(f, 0, 0, 1024, 4096).status, NFS3ERR_NOTDIR);
}

}  // namespace
}  // namespace nasd::e2e
