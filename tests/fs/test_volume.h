// Test fixture helpers: a scratch LFS volume in a private temp directory.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fs/lfs/lfs_volume.h"
#include "tests/support/journal_pass_for_testing.h"

namespace nasd::fs::lfs::testing {

class ScratchDir {
 public:
  ScratchDir() {
    char tmpl[] = "/tmp/nasd-lfs-test-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline LfsOptions small_options(const std::string& dir, uint64_t size = 64ull << 20,
                                uint64_t segment = 1ull << 20) {
  LfsOptions o;
  o.backing = dir + "/vol.lfs";
  o.size = size;
  o.segment_size = segment;
  o.cache_bytes = 32ull << 20;
  o.volume_id = 5;
  o.background_threads = false;
  return o;
}

inline OpContext root_ctx() {
  OpContext c;
  c.cred.uid = 0;
  c.cred.gid = 0;
  return c;
}

inline OpContext user_ctx(uint32_t uid, uint32_t gid, std::vector<uint32_t> gids = {}) {
  OpContext c;
  c.cred.uid = uid;
  c.cred.gid = gid;
  c.cred.gids = std::move(gids);
  return c;
}

inline std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    v[i] = uint8_t(x);
  }
  return v;
}

inline std::unique_ptr<LfsVolume> make_volume(const LfsOptions& o) {
  std::string err;
  auto v = LfsVolume::open_or_create(o, &err);
  EXPECT_TRUE(v) << err;
  return v;
}

inline std::unique_ptr<LfsVolume> reopen(const LfsOptions& o) {
  std::string err;
  auto v = LfsVolume::open(o, &err);
  EXPECT_TRUE(v) << err;
  return v;
}

// Convenience wrappers that fail the test on unexpected status.
inline InodeId create_file(LfsVolume& v, InodeId dir, const std::string& name,
                           const OpContext& ctx = root_ctx()) {
  InodeId id;
  std::optional<Attr> a;
  Wcc w;
  SetAttr sa;
  sa.mode = 0644;
  EXPECT_EQ(v.create(ctx, dir, name, CreateMode::Guarded, sa, 0, &id, &a, &w), Status::Ok) << name;
  return id;
}

inline InodeId make_dir(LfsVolume& v, InodeId dir, const std::string& name,
                        const OpContext& ctx = root_ctx()) {
  InodeId id;
  std::optional<Attr> a;
  Wcc w;
  SetAttr sa;
  sa.mode = 0755;
  EXPECT_EQ(v.mkdir(ctx, dir, name, sa, &id, &a, &w), Status::Ok) << name;
  return id;
}

inline Status write_at(LfsVolume& v, InodeId id, uint64_t off, const std::vector<uint8_t>& d,
                       Stability s = Stability::FileSync, const OpContext& ctx = root_ctx()) {
  Stability got;
  Wcc w;
  return v.write(ctx, id, off, d, s, &got, &w);
}

inline std::vector<uint8_t> read_at(LfsVolume& v, InodeId id, uint64_t off, uint32_t n,
                                    const OpContext& ctx = root_ctx()) {
  std::vector<uint8_t> d;
  bool eof;
  std::optional<Attr> a;
  EXPECT_EQ(v.read(ctx, id, off, n, &d, &eof, &a), Status::Ok);
  return d;
}

inline Status lookup(LfsVolume& v, InodeId dir, const std::string& name, InodeId* out,
                     const OpContext& ctx = root_ctx()) {
  std::optional<Attr> a, da;
  return v.lookup(ctx, dir, name, out, &a, &da);
}

inline Attr getattr(LfsVolume& v, InodeId id) {
  Attr a;
  EXPECT_EQ(v.getattr(root_ctx(), id, &a), Status::Ok);
  return a;
}

}  // namespace nasd::fs::lfs::testing
