// The Volume contract (fs/volume.h), one typed suite run against every implementation: the LFS,
// the in-memory test fs, the NVRAM journal over the LFS, and a RemoteVolume reaching a MemoryFs
// through a VolumeServer over a real loopback interconnect connection. What one implementation
// answers, all must answer; a difference is a bug in one of them (or in the codec between).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cluster/interconnect/interconnect_server.h"
#include "cluster/interconnect/peer_client.h"
#include "cluster/interconnect/remote_volume.h"
#include "cluster/interconnect/volume_server.h"
#include "cluster/scaleout/ifs_volume.h"
#include "fs/call/calls.h"
#include "fs/lfs/lfs_volume.h"
#include "fs/wrapped_volume.h"
#include "nvram/journal.h"
#include "nvram/journal_options.h"
#include "nvram/journal_volume.h"
#include "tests/support/memory_fs.h"
#include "tests/support/memory_resolver.h"
#include "tests/cluster/scaleout/local_ifs_cluster.h"

namespace nasd::contract {
namespace {

using namespace std::chrono_literals;
using fs::Status;

constexpr uint32_t kVolumeId = 5;

class Scratch {
 public:
  Scratch() {
    char tmpl[] = "/tmp/nasd-contract-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~Scratch() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

fs::lfs::LfsOptions lfs_options(const std::string& dir) {
  fs::lfs::LfsOptions o;
  o.backing = dir + "/vol.lfs";
  o.size = 64ull << 20;
  o.segment_size = 1ull << 20;
  o.cache_bytes = 16ull << 20;
  o.volume_id = kVolumeId;
  o.background_threads = false;
  return o;
}

std::shared_ptr<fs::lfs::LfsVolume> make_lfs(const std::string& dir) {
  std::string err;
  std::shared_ptr<fs::lfs::LfsVolume> v = fs::lfs::LfsVolume::open_or_create(lfs_options(dir), &err);
  EXPECT_TRUE(v) << err;
  return v;
}

// --- one environment per implementation: owns what the volume needs, exposes the volume.

struct LfsEnv {
  Scratch dir;
  std::shared_ptr<fs::lfs::LfsVolume> volume = make_lfs(dir.path());
  fs::Volume& v() { return *volume; }
};

struct MemoryFsEnv {
  std::shared_ptr<test_support::MemoryFs> volume = std::make_shared<test_support::MemoryFs>(kVolumeId);
  fs::Volume& v() { return *volume; }
};

struct JournalOverLfsEnv {
  Scratch dir;
  std::shared_ptr<fs::lfs::LfsVolume> lfs = make_lfs(dir.path());
  std::shared_ptr<nvram::Journal> journal;
  std::unique_ptr<nvram::JournalVolume> volume;
  JournalOverLfsEnv() {
    nvram::JournalOptions o;
    o.path = dir.path() + "/nvram.img";
    o.size = 8 << 20;
    journal = nvram::Journal::open(o);
    volume = std::make_unique<nvram::JournalVolume>(journal, lfs);
    volume->recover();
  }
  ~JournalOverLfsEnv() {
    volume.reset();
    journal->shutdown();
  }
  fs::Volume& v() { return *volume; }
};

struct RemoteOverLoopbackEnv {
  std::shared_ptr<test_support::MemoryFs> owned = std::make_shared<test_support::MemoryFs>(kVolumeId);
  test_support::MemoryResolver resolver;
  std::unique_ptr<interconnect::InterconnectServer> server;
  std::unique_ptr<interconnect::VolumeServer> volume_server;
  std::shared_ptr<interconnect::PeerClient> client;
  std::unique_ptr<interconnect::RemoteVolume> volume;
  RemoteOverLoopbackEnv() {
    resolver.add(owned.get());
    interconnect::InterconnectServerOptions so;
    so.host = "127.0.0.1";
    so.port = 0;
    so.cluster_name = "contract";
    so.local_node = "owner";
    so.credentials = {std::vector<uint8_t>(32, 0x5a), "owner"};
    server = std::make_unique<interconnect::InterconnectServer>(so);
    volume_server = std::make_unique<interconnect::VolumeServer>(&resolver);
    volume_server->attach(*server);
    server->start();
    interconnect::PeerClientOptions co;
    co.host = "127.0.0.1";
    co.port = server->port();
    co.cluster_name = "contract";
    co.local_node = "front";
    co.expected_peer = "owner";
    co.credentials = {std::vector<uint8_t>(32, 0x5a), "front"};
    client = std::make_shared<interconnect::PeerClient>(co);
    client->start();
    EXPECT_TRUE(client->wait_connected(5s)) << client->last_error();
    volume = std::make_unique<interconnect::RemoteVolume>(kVolumeId, client,
                                                          interconnect::RemoteVolumeOptions{5s, 1s, 8, nullptr});
  }
  ~RemoteOverLoopbackEnv() {
    client->stop();
    server->stop();
  }
  fs::Volume& v() { return *volume; }
};

// A wrapper that changes nothing must be indistinguishable from what it wraps.
struct WrappedMemoryFsEnv {
  std::shared_ptr<fs::WrappedVolume> volume = std::make_shared<fs::WrappedVolume>(
      std::make_shared<test_support::MemoryFs>(kVolumeId));
  fs::Volume& v() { return *volume; }
};

// The scale-out volume over four in-process nodes, and the NVRAM journal over it (as the
// coordinator serves it).
struct IfsEnv {
  scaleout::testing::LocalIfsCluster cluster;
  std::unique_ptr<scaleout::IfsVolume> volume;
  IfsEnv() {
    scaleout::IfsOptions o;
    o.name = "ifs";
    o.volume_id = kVolumeId;
    std::string err;
    volume = scaleout::IfsVolume::open(o, &cluster, &err);
    EXPECT_TRUE(volume) << err;
  }
  fs::Volume& v() { return *volume; }
};

struct JournalOverIfsEnv {
  Scratch dir;
  scaleout::testing::LocalIfsCluster cluster;
  std::shared_ptr<scaleout::IfsVolume> ifs;
  std::shared_ptr<nvram::Journal> journal;
  std::unique_ptr<nvram::JournalVolume> volume;
  JournalOverIfsEnv() {
    scaleout::IfsOptions o;
    o.name = "ifs";
    o.volume_id = kVolumeId;
    std::string err;
    ifs = scaleout::IfsVolume::open(o, &cluster, &err);
    EXPECT_TRUE(ifs) << err;
    nvram::JournalOptions jo;
    jo.path = dir.path() + "/nvram.img";
    jo.size = 8 << 20;
    journal = nvram::Journal::open(jo);
    volume = std::make_unique<nvram::JournalVolume>(journal, ifs);
    volume->recover();
  }
  ~JournalOverIfsEnv() {
    volume.reset();
    journal->shutdown();
  }
  fs::Volume& v() { return *volume; }
};

template <class Env>
class VolumeContract : public ::testing::Test {
 protected:
  VolumeContract() : env_(std::make_unique<Env>()), v_(env_->v()) {}

  static fs::OpContext root_ctx() {
    fs::OpContext c;
    c.cred.uid = 0;
    c.cred.gid = 0;
    return c;
  }
  static fs::OpContext user_ctx() {
    fs::OpContext c;
    c.cred.uid = 1000;
    c.cred.gid = 1000;
    return c;
  }

  Status create(fs::InodeId dir, const std::string& name, fs::InodeId* out,
                fs::CreateMode mode = fs::CreateMode::Guarded,
                const fs::OpContext& ctx = root_ctx()) {
    fs::SetAttr sa;
    sa.mode = 0644;
    std::optional<fs::Attr> attr;
    fs::Wcc wcc;
    Status st = v_.create(ctx, dir, name, mode, sa, 0, out, &attr, &wcc);
    if (st == Status::Ok) {
      EXPECT_TRUE(attr.has_value()) << "CREATE answered no attributes of the new file";
      EXPECT_TRUE(wcc.after.has_value()) << "CREATE answered no directory attributes after";
      if (attr) {
        EXPECT_EQ(attr->type, fs::FileType::Reg);
      }
    }
    return st;
  }
  fs::InodeId mkdir(fs::InodeId dir, const std::string& name, uint32_t mode = 0755) {
    fs::SetAttr sa;
    sa.mode = mode;
    fs::InodeId out;
    std::optional<fs::Attr> attr;
    fs::Wcc wcc;
    EXPECT_EQ(v_.mkdir(root_ctx(), dir, name, sa, &out, &attr, &wcc), Status::Ok) << name;
    EXPECT_TRUE(attr && attr->type == fs::FileType::Dir);
    return out;
  }
  Status lookup(fs::InodeId dir, const std::string& name, fs::InodeId* out) {
    std::optional<fs::Attr> obj, dattr;
    return v_.lookup(root_ctx(), dir, name, out, &obj, &dattr);
  }
  fs::Attr getattr(fs::InodeId id, Status want = Status::Ok) {
    fs::Attr a;
    EXPECT_EQ(v_.getattr(root_ctx(), id, &a), want);
    return a;
  }
  Status write(fs::InodeId id, uint64_t offset, const std::vector<uint8_t>& data,
               fs::Stability stable, fs::Stability* committed) {
    fs::Wcc wcc;
    return v_.write(root_ctx(), id, offset, data, stable, committed, &wcc);
  }
  std::set<std::string> names(fs::InodeId dir) {
    std::set<std::string> out;
    uint64_t cookie = 0, verf = 0;
    for (int round = 0; round < 100; ++round) {
      fs::ReaddirResult r;
      EXPECT_EQ(v_.readdir(root_ctx(), dir, cookie, verf, 3, false, &r), Status::Ok);
      for (const auto& e : r.entries) {
        EXPECT_TRUE(out.insert(e.name).second) << e.name << " listed twice";
        cookie = e.cookie;
      }
      verf = r.cookieverf;
      if (r.eof) break;
    }
    out.erase(".");
    out.erase("..");
    return out;
  }

  std::unique_ptr<Env> env_;
  fs::Volume& v_;
};

using Implementations = ::testing::Types<LfsEnv, MemoryFsEnv, JournalOverLfsEnv,
                                         RemoteOverLoopbackEnv, WrappedMemoryFsEnv, IfsEnv,
                                         JournalOverIfsEnv>;
class ImplementationNames {
 public:
  template <class T>
  static std::string GetName(int) {
    if (std::is_same_v<T, LfsEnv>) return "Lfs";
    if (std::is_same_v<T, MemoryFsEnv>) return "MemoryFs";
    if (std::is_same_v<T, JournalOverLfsEnv>) return "JournalOverLfs";
    if (std::is_same_v<T, RemoteOverLoopbackEnv>) return "RemoteOverLoopback";
    if (std::is_same_v<T, IfsEnv>) return "ScaleOut";
    if (std::is_same_v<T, JournalOverIfsEnv>) return "JournalOverScaleOut";
    return "WrappedMemoryFs";
  }
};
TYPED_TEST_SUITE(VolumeContract, Implementations, ImplementationNames);

TYPED_TEST(VolumeContract, IdentityAndTheRootDirectory) {
  EXPECT_EQ(this->v_.id(), kVolumeId);
  fs::Attr root = this->getattr(this->v_.root());
  EXPECT_EQ(root.type, fs::FileType::Dir);
  EXPECT_GE(root.nlink, 2u);
  EXPECT_GT(this->v_.limits().max_file_size, 0u);
  EXPECT_EQ(this->v_.write_verifier(), this->v_.write_verifier()) << "stable while running";
}

// The one entry (Volume::call, try_call) answers a request exactly as the method of the same
// call does; outside a resumable call, an attempt of a name-space mutation changes nothing.
TYPED_TEST(VolumeContract, ARequestIsAnsweredAsItsMethod) {
  fs::Volume& v = this->v_;
  fs::call::VolumeRequest create;
  create.volume_id = v.id();
  create.ctx = this->root_ctx();
  fs::SetAttr sa;
  sa.mode = 0640;
  create.args = fs::call::CreateArgs{v.root(), "by-request", fs::CreateMode::Guarded, sa, 0};
  fs::call::VolumeReply made = v.call(create);
  EXPECT_EQ(made.op, fs::call::VolumeOp::Create);
  ASSERT_EQ(made.status, Status::Ok);
  const auto* created = std::get_if<fs::call::CreatedResult>(&made.result);
  ASSERT_NE(created, nullptr) << "an answered call carries its results";
  ASSERT_TRUE(created->obj_attr.has_value());
  EXPECT_EQ(created->obj_attr->mode & 0777, 0640u);
  EXPECT_TRUE(created->dir_wcc.after.has_value());
  fs::InodeId found;
  ASSERT_EQ(this->lookup(v.root(), "by-request", &found), Status::Ok);
  EXPECT_EQ(found, created->id);

  fs::call::VolumeRequest getattr = create;
  getattr.args = fs::call::GetattrArgs{found};
  fs::call::VolumeReply got = v.call(getattr);
  ASSERT_EQ(got.status, Status::Ok);
  const auto* attr = std::get_if<fs::call::AttrResult>(&got.result);
  ASSERT_NE(attr, nullptr);
  EXPECT_EQ(attr->attr.fileid, this->getattr(found).fileid);
  EXPECT_EQ(attr->attr.mode, this->getattr(found).mode);
  if (std::optional<fs::call::VolumeReply> tried = v.try_call(getattr)) {
    ASSERT_EQ(tried->status, Status::Ok);
    const auto* tried_attr = std::get_if<fs::call::AttrResult>(&tried->result);
    ASSERT_NE(tried_attr, nullptr);
    EXPECT_EQ(tried_attr->attr.fileid, attr->attr.fileid);
  }

  fs::call::VolumeRequest remove = create;
  remove.args = fs::call::RemoveArgs{v.root(), "by-request"};
  EXPECT_FALSE(v.try_call(remove).has_value()) << "a mutation's attempt outside a resumable call";
  EXPECT_EQ(this->lookup(v.root(), "by-request", &found), Status::Ok) << "the attempt removed it";
  fs::call::VolumeReply removed = v.call(remove);
  EXPECT_EQ(removed.status, Status::Ok);
  EXPECT_EQ(this->lookup(v.root(), "by-request", &found), Status::NoEnt);
}

TYPED_TEST(VolumeContract, CreateLookupAndNameErrors) {
  fs::InodeId f, again;
  ASSERT_EQ(this->create(this->v_.root(), "f", &f), Status::Ok);
  ASSERT_EQ(this->lookup(this->v_.root(), "f", &again), Status::Ok);
  EXPECT_EQ(again, f);
  EXPECT_EQ(this->create(this->v_.root(), "f", &again), Status::Exist) << "GUARDED over a file";
  EXPECT_EQ(this->create(this->v_.root(), "f", &again, fs::CreateMode::Unchecked), Status::Ok);
  EXPECT_EQ(again, f) << "UNCHECKED over a file opens that file";
  EXPECT_EQ(this->lookup(this->v_.root(), "missing", &again), Status::NoEnt);
  EXPECT_EQ(this->create(f, "x", &again), Status::NotDir);
  EXPECT_EQ(this->create(this->v_.root(), std::string(300, 'n'), &again), Status::NameTooLong);
}

TYPED_TEST(VolumeContract, StableWritesReadBackAndCommittedIsAtLeastAskedFor) {
  fs::InodeId f;
  ASSERT_EQ(this->create(this->v_.root(), "data", &f), Status::Ok);
  std::vector<uint8_t> bytes(10000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 1);
  fs::Stability committed = fs::Stability::Unstable;
  ASSERT_EQ(this->write(f, 100, bytes, fs::Stability::FileSync, &committed), Status::Ok);
  EXPECT_EQ(committed, fs::Stability::FileSync);
  ASSERT_EQ(this->write(f, 0, {9, 9}, fs::Stability::Unstable, &committed), Status::Ok);
  std::vector<uint8_t> got;
  bool eof = false;
  std::optional<fs::Attr> attr;
  ASSERT_EQ(this->v_.read(this->root_ctx(), f, 0, 20000, &got, &eof, &attr), Status::Ok);
  ASSERT_EQ(got.size(), 10100u);
  EXPECT_TRUE(eof);
  EXPECT_EQ(got[0], 9);
  EXPECT_EQ(got[2], 0) << "a hole reads as zeros";
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), got.begin() + 100));
  ASSERT_TRUE(attr.has_value());
  EXPECT_EQ(attr->size, 10100u);
  // The attempts, where an implementation answers them, say exactly what read() said: the copy
  // and the references to the volume's own memory (READ sent from cache blocks) alike.
  for (auto [offset, count] : {std::pair<uint64_t, uint32_t>{0, 20000}, {4000, 5000}, {10099, 7}}) {
    std::vector<uint8_t> want(got.begin() + offset,
                              got.begin() + std::min<uint64_t>(got.size(), offset + count));
    std::vector<uint8_t> copy;
    bool copy_eof = false;
    std::optional<fs::Attr> a;
    auto st = this->v_.try_read(this->root_ctx(), f, offset, count, &copy, &copy_eof, &a);
    if (st) {
      ASSERT_EQ(*st, Status::Ok);
      EXPECT_EQ(copy, want) << "try_read at " << offset;
    }
    util::ByteSlices shared;
    bool shared_eof = false;
    st = this->v_.try_read_shared(this->root_ctx(), f, offset, count, &shared, &shared_eof, &a);
    if (st) {
      ASSERT_EQ(*st, Status::Ok);
      std::vector<uint8_t> bytes_seen;
      shared.copy_to(&bytes_seen);
      EXPECT_EQ(bytes_seen, want) << "try_read_shared at " << offset;
      EXPECT_EQ(shared_eof, offset + count >= 10100u);
    }
  }
  fs::Wcc wcc;
  EXPECT_EQ(this->v_.commit(this->root_ctx(), f, 0, 0, &wcc), Status::Ok);
}

TYPED_TEST(VolumeContract, SetattrSizeTruncatesAndTheGuardIsChecked) {
  fs::InodeId f;
  ASSERT_EQ(this->create(this->v_.root(), "t", &f), Status::Ok);
  fs::Stability committed;
  ASSERT_EQ(this->write(f, 0, std::vector<uint8_t>(5000, 1), fs::Stability::FileSync, &committed),
            Status::Ok);
  fs::SetAttr sa;
  sa.size = 10;
  fs::Wcc wcc;
  ASSERT_EQ(this->v_.setattr(this->root_ctx(), f, sa, std::nullopt, &wcc), Status::Ok);
  EXPECT_EQ(this->getattr(f).size, 10u);
  fs::Time wrong{1, 1};
  EXPECT_EQ(this->v_.setattr(this->root_ctx(), f, sa, wrong, &wcc), Status::NotSync);
}

TYPED_TEST(VolumeContract, DirectoriesListEveryEntryOnceAndRmdirNeedsEmpty) {
  fs::InodeId d = this->mkdir(this->v_.root(), "d");
  std::set<std::string> want;
  for (int i = 0; i < 10; ++i) {
    fs::InodeId f;
    ASSERT_EQ(this->create(d, "f" + std::to_string(i), &f), Status::Ok);
    want.insert("f" + std::to_string(i));
  }
  EXPECT_EQ(this->names(d), want);
  fs::Wcc wcc;
  EXPECT_EQ(this->v_.rmdir(this->root_ctx(), this->v_.root(), "d", &wcc), Status::NotEmpty);
  for (const auto& n : want) ASSERT_EQ(this->v_.remove(this->root_ctx(), d, n, &wcc), Status::Ok);
  EXPECT_EQ(this->v_.rmdir(this->root_ctx(), this->v_.root(), "d", &wcc), Status::Ok);
  this->getattr(d, Status::Stale);
}

TYPED_TEST(VolumeContract, RemovedObjectsAreStale) {
  fs::InodeId f;
  ASSERT_EQ(this->create(this->v_.root(), "gone", &f), Status::Ok);
  fs::Wcc wcc;
  ASSERT_EQ(this->v_.remove(this->root_ctx(), this->v_.root(), "gone", &wcc), Status::Ok);
  EXPECT_TRUE(wcc.after.has_value()) << "REMOVE answered no directory attributes after";
  this->getattr(f, Status::Stale);
  EXPECT_EQ(this->lookup(this->v_.root(), "gone", &f), Status::NoEnt);
  EXPECT_EQ(this->v_.remove(this->root_ctx(), this->v_.root(), "gone", &wcc), Status::NoEnt);
}

TYPED_TEST(VolumeContract, RenameLinkSymlinkAndMknod) {
  fs::InodeId f, moved, sub = this->mkdir(this->v_.root(), "sub");
  ASSERT_EQ(this->create(this->v_.root(), "a", &f), Status::Ok);
  fs::Wcc from, to;
  ASSERT_EQ(this->v_.rename(this->root_ctx(), this->v_.root(), "a", sub, "b", &from, &to),
            Status::Ok);
  ASSERT_EQ(this->lookup(sub, "b", &moved), Status::Ok);
  EXPECT_EQ(moved, f);
  EXPECT_EQ(this->lookup(this->v_.root(), "a", &moved), Status::NoEnt);

  std::optional<fs::Attr> fattr;
  fs::Wcc wcc;
  ASSERT_EQ(this->v_.link(this->root_ctx(), f, this->v_.root(), "hard", &fattr, &wcc), Status::Ok);
  ASSERT_TRUE(fattr.has_value());
  EXPECT_EQ(fattr->nlink, 2u);

  fs::InodeId s;
  std::optional<fs::Attr> sattr;
  ASSERT_EQ(this->v_.symlink(this->root_ctx(), this->v_.root(), "ln", "sub/b", {}, &s, &sattr, &wcc),
            Status::Ok);
  std::string target;
  std::optional<fs::Attr> lattr;
  ASSERT_EQ(this->v_.readlink(this->root_ctx(), s, &target, &lattr), Status::Ok);
  EXPECT_EQ(target, "sub/b");

  fs::InodeId n;
  std::optional<fs::Attr> nattr;
  ASSERT_EQ(this->v_.mknod(this->root_ctx(), this->v_.root(), "fifo", fs::FileType::Fifo, {}, 0, 0,
                           &n, &nattr, &wcc),
            Status::Ok);
  ASSERT_TRUE(nattr.has_value());
  EXPECT_EQ(nattr->type, fs::FileType::Fifo);
  EXPECT_EQ(this->v_.mknod(this->root_ctx(), this->v_.root(), "bad", fs::FileType::Reg, {}, 0, 0,
                           &n, &nattr, &wcc),
            Status::BadType);
}

TYPED_TEST(VolumeContract, PermissionsAreCheckedForTheCallersCredential) {
  fs::InodeId d = this->mkdir(this->v_.root(), "private", 0755);
  fs::InodeId f;
  EXPECT_EQ(this->create(d, "x", &f, fs::CreateMode::Guarded, this->user_ctx()), Status::Access);
  uint32_t granted = 0;
  std::optional<fs::Attr> attr;
  ASSERT_EQ(this->v_.access(this->user_ctx(), d, fs::kAccessRead | fs::kAccessModify, &granted,
                            &attr),
            Status::Ok);
  EXPECT_EQ(granted, static_cast<uint32_t>(fs::kAccessRead));
}

TYPED_TEST(VolumeContract, FsstatAnswersForTheRoot) {
  fs::FsStat st;
  std::optional<fs::Attr> attr;
  ASSERT_EQ(this->v_.fsstat(this->root_ctx(), this->v_.root(), &st, &attr), Status::Ok);
  EXPECT_GT(st.total_bytes, 0u);
  EXPECT_LE(st.free_bytes, st.total_bytes);
  EXPECT_TRUE(attr.has_value());
}

}  // namespace
}  // namespace nasd::contract
