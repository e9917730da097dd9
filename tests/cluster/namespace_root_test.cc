#include "cluster/namespace_root.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/support/memory_fs.h"
#include "tests/support/memory_resolver.h"

namespace nasd::cluster {
namespace {

class NamespaceRootTest : public ::testing::Test {
 protected:
  NamespaceRootTest() : v0_(0), v7_(7), root_(&resolver_) {
    resolver_.add(&v0_);
    resolver_.add(&v7_);
    root_.add_entry("v0", 0);
    root_.add_entry("v7", 7);
    root_.add_entry("gone", 9);  // configured, but no such volume answers
  }
  fs::OpContext ctx_;
  test_support::MemoryFs v0_, v7_;
  test_support::MemoryResolver resolver_;
  NamespaceRoot root_;
};

TEST_F(NamespaceRootTest, LookupOfAVolumeIsAJunctionToItsRoot) {
  fs::InodeId out;
  std::optional<fs::Attr> obj, dir;
  ASSERT_EQ(root_.lookup(ctx_, root_.root(), "v7", &out, &obj, &dir), fs::Status::Ok);
  EXPECT_EQ(fs::junction_target(out), std::optional<uint32_t>(7));
  ASSERT_TRUE(obj.has_value());
  fs::Attr v7_root;
  ASSERT_EQ(v7_.getattr(ctx_, v7_.root(), &v7_root), fs::Status::Ok);
  EXPECT_EQ(obj->fileid, v7_root.fileid);
  EXPECT_EQ(obj->type, fs::FileType::Dir);
  ASSERT_TRUE(dir.has_value());
  EXPECT_EQ(dir->mode, 0555u);

  EXPECT_EQ(root_.lookup(ctx_, root_.root(), "v8", &out, &obj, &dir), fs::Status::NoEnt);
  ASSERT_EQ(root_.lookup(ctx_, root_.root(), "..", &out, &obj, &dir), fs::Status::Ok);
  EXPECT_EQ(out, root_.root());
  EXPECT_EQ(root_.lookup(ctx_, fs::InodeId{5, 1}, "v0", &out, &obj, &dir), fs::Status::Stale);
}

TEST_F(NamespaceRootTest, ReaddirPagesThroughEveryNameOnceWithResumableCookies) {
  std::vector<std::string> seen;
  uint64_t cookie = 0, verf = 0;
  for (int calls = 0; calls < 10; calls++) {
    fs::ReaddirResult r;
    ASSERT_EQ(root_.readdir(ctx_, root_.root(), cookie, verf, 2, true, &r), fs::Status::Ok);
    ASSERT_LE(r.entries.size(), 2u);
    for (const auto& e : r.entries) {
      seen.push_back(e.name);
      cookie = e.cookie;
    }
    verf = r.cookieverf;
    if (r.eof) break;
  }
  EXPECT_EQ(seen, (std::vector<std::string>{".", "..", "v0", "v7", "gone"}));
  fs::ReaddirResult bad;
  EXPECT_EQ(root_.readdir(ctx_, root_.root(), 0, verf + 1, 10, false, &bad), fs::Status::BadCookie);
  EXPECT_EQ(root_.readdir(ctx_, root_.root(), 99, verf, 10, false, &bad), fs::Status::BadCookie);
}

TEST_F(NamespaceRootTest, EveryChangeIsRefusedWithWccData) {
  fs::InodeId out;
  std::optional<fs::Attr> obj;
  fs::Wcc wcc;
  EXPECT_EQ(root_.create(ctx_, root_.root(), "f", fs::CreateMode::Unchecked, {}, 0, &out, &obj, &wcc),
            fs::Status::RoFs);
  EXPECT_TRUE(wcc.before.has_value() && wcc.after.has_value());
  EXPECT_EQ(root_.mkdir(ctx_, root_.root(), "d", {}, &out, &obj, &wcc), fs::Status::RoFs);
  EXPECT_EQ(root_.remove(ctx_, root_.root(), "v0", &wcc), fs::Status::RoFs);
  EXPECT_EQ(root_.rmdir(ctx_, root_.root(), "v0", &wcc), fs::Status::RoFs);
  EXPECT_EQ(root_.setattr(ctx_, root_.root(), {}, std::nullopt, &wcc), fs::Status::RoFs);
  uint32_t granted = 0;
  std::optional<fs::Attr> attr;
  ASSERT_EQ(root_.access(ctx_, root_.root(), 0x3f, &granted, &attr), fs::Status::Ok);
  EXPECT_EQ(granted, fs::kAccessRead | fs::kAccessLookup | fs::kAccessExecute);
  // The real volumes behind it are untouched.
  fs::ReaddirResult r;
  ASSERT_EQ(v0_.readdir(ctx_, v0_.root(), 0, 0, 100, false, &r), fs::Status::Ok);
  for (const auto& e : r.entries) EXPECT_TRUE(e.name == "." || e.name == "..") << e.name;
}

}  // namespace
}  // namespace nasd::cluster
