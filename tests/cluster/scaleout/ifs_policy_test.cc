// Per-directory protection policies of the scale-out volume (ifs_policy.h): inheritance, paths,
// what the cluster can honour and the image's encoding (pure); then over four in-process nodes:
// new groups planned with the directory's policy, a policy change restriped in the background
// with every byte read back and parity verified, and the policy surviving a new coordinator.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "cluster/scaleout/ifs_policy.h"
#include "cluster/scaleout/ifs_volume.h"
#include "tests/cluster/scaleout/local_ifs_cluster.h"

namespace nasd::scaleout {
namespace {

using fs::Status;

ProtectionPolicy policy(const char* text) {
  ProtectionPolicy p;
  std::string err;
  EXPECT_TRUE(parse_protection_policy(text, &p, &err)) << text << ": " << err;
  return p;
}

// root / a (dir, +3d:1n) / b (dir) / f (file); root / g (file); root / c (dir) / h (file)
IfsState tree() {
  IfsState s;
  auto add = [&](uint64_t ino, uint64_t parent, fs::FileType type, const std::string& name) {
    IfsInode& n = s.inodes[ino];
    n.attr.type = type;
    n.parent = parent;
    if (ino == parent) return;
    IfsInode& d = s.inodes[parent];
    const uint64_t cookie = d.next_cookie++;
    d.names[name] = cookie;
    d.entries[cookie] = {name, ino};
  };
  add(kIfsRootIno, kIfsRootIno, fs::FileType::Dir, "");
  add(2, kIfsRootIno, fs::FileType::Dir, "a");
  add(3, 2, fs::FileType::Dir, "b");
  add(4, 3, fs::FileType::Reg, "f");
  add(5, kIfsRootIno, fs::FileType::Reg, "g");
  add(6, kIfsRootIno, fs::FileType::Dir, "c");
  add(7, 6, fs::FileType::Reg, "h");
  s.inodes[2].policy = policy("+3d:1n");
  for (uint64_t f : {4, 5, 7}) s.inodes[f].extents[0] = GroupRecord{};
  s.next_ino = 8;
  return s;
}

TEST(IfsPolicy, FilesTakeTheNearestDirectorysPolicyElseTheVolumes) {
  const IfsState s = tree();
  const ProtectionPolicy dflt = policy("+2d:1n");
  EffectivePolicy e = effective_policy(s, 4, dflt);  // /a/b/f: from /a
  EXPECT_EQ(e.policy, policy("+3d:1n"));
  EXPECT_EQ(e.source, PolicySource::Ancestor);
  EXPECT_EQ(e.from, 2u);
  e = effective_policy(s, 2, dflt);  // /a itself
  EXPECT_EQ(e.source, PolicySource::Directory);
  e = effective_policy(s, 5, dflt);  // /g: the volume's
  EXPECT_EQ(e.policy, dflt);
  EXPECT_EQ(e.source, PolicySource::Volume);

  IfsState nested = s;  // a nearer directory's policy wins over a farther one's
  nested.inodes[3].policy = policy("+1n");
  EXPECT_EQ(effective_policy(nested, 4, dflt).policy, policy("+1n"));
  EXPECT_EQ(effective_policy(nested, 4, dflt).from, 3u);

  const auto files = file_policies(nested, dflt);
  ASSERT_EQ(files.size(), 1u);  // only /a/b/f differs from the default
  EXPECT_EQ(files.at(4), policy("+1n"));
  nested.inodes[2].policy.reset();
  nested.inodes[3].policy.reset();
  EXPECT_TRUE(file_policies(nested, dflt).empty());

  IfsState loop = s;  // a damaged parent chain ends the walk, never loops
  loop.inodes[2].policy.reset();
  loop.inodes[2].parent = 3;
  EXPECT_EQ(effective_policy(loop, 4, dflt).source, PolicySource::Volume);
}

TEST(IfsPolicy, PathsResolveAndPrint) {
  const IfsState s = tree();
  uint64_t ino = 0;
  std::string why;
  ASSERT_TRUE(resolve_path(s, "/a/b/f", &ino, &why)) << why;
  EXPECT_EQ(ino, 4u);
  ASSERT_TRUE(resolve_path(s, "/", &ino, &why));
  EXPECT_EQ(ino, kIfsRootIno);
  ASSERT_TRUE(resolve_path(s, "//a/b/", &ino, &why));
  EXPECT_EQ(ino, 3u);
  EXPECT_FALSE(resolve_path(s, "a", &ino, &why));
  EXPECT_FALSE(resolve_path(s, "/a/../g", &ino, &why));
  EXPECT_FALSE(resolve_path(s, "/a/x", &ino, &why));
  EXPECT_NE(why.find("no such"), std::string::npos);
  EXPECT_FALSE(resolve_path(s, "/g/x", &ino, &why));
  EXPECT_FALSE(resolve_path(s, "/" + std::string(5000, 'x'), &ino, &why));
  EXPECT_EQ(path_of(s, 4), "/a/b/f");
  EXPECT_EQ(path_of(s, kIfsRootIno), "/");
}

TEST(IfsPolicy, PoliciesTheMembersCannotHonourAreRefused) {
  Topology four;
  for (uint32_t i = 1; i <= 4; i++) {
    NodeState n;
    n.id = i;
    n.drives.resize(4);
    four.nodes.push_back(n);
  }
  for (const char* ok : {"+2d:1n", "+3d:1n", "+1n", "+2n", "+3n", "+4d:2n", "6+2/2", "4+4/2"})
    EXPECT_EQ(check_honourable(policy(ok), four), "") << ok;
  for (const char* no : {"+4n", "6+2/1", "8+2/2", "16+4/2"}) {
    const std::string why = check_honourable(policy(no), four);
    EXPECT_NE(why.find("needs"), std::string::npos) << no << ": " << why;
  }
  Topology thin = four;  // one drive per node: b above 1 cannot be honoured on 4 nodes for +4d:2n
  for (NodeState& n : thin.nodes) n.drives.resize(1);
  EXPECT_NE(check_honourable(policy("+4d:2n"), thin), "");
  EXPECT_EQ(check_honourable(policy("+3n"), thin), "");
}

TEST(IfsPolicy, TheImageKeepsDirectoryPoliciesAndRefusesBadOnes) {
  IfsState s = tree();
  for (auto& [ino, n] : s.inodes) n.extents.clear();  // (placeholders, not valid records)
  s.inodes[6].policy = policy("4+2/2");
  const std::vector<uint8_t> bytes = encode_state(s);
  IfsState back;
  std::string why;
  ASSERT_TRUE(decode_state(bytes.data(), bytes.size(), &back, &why)) << why;
  ASSERT_TRUE(back.inodes[2].policy.has_value());
  EXPECT_EQ(*back.inodes[2].policy, policy("+3d:1n"));
  EXPECT_EQ(*back.inodes[6].policy, policy("4+2/2"));
  EXPECT_FALSE(back.inodes[3].policy.has_value());
  EXPECT_EQ(encode_state(back), bytes);

  IfsState on_file = s;  // a policy on a file is refused as damage
  on_file.inodes[5].policy = policy("+1n");
  const std::vector<uint8_t> bad = encode_state(on_file);
  EXPECT_FALSE(decode_state(bad.data(), bad.size(), &back, &why));
  std::vector<uint8_t> trailing = bytes;  // bytes after the last section
  trailing.push_back(0);
  EXPECT_FALSE(decode_state(trailing.data(), trailing.size(), &back, &why));
}

// ---- over four in-process nodes

fs::OpContext root() {
  fs::OpContext c;
  c.cred.uid = 0;
  c.cred.gid = 0;
  return c;
}

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  std::mt19937 rng(seed);
  for (auto& b : v) b = uint8_t(rng());
  return v;
}

std::unique_ptr<IfsVolume> open_volume(IfsCluster* c) {
  IfsOptions o;
  o.name = "ifs";
  o.volume_id = 100;
  std::string err;
  auto v = IfsVolume::open(o, c, &err);
  EXPECT_TRUE(v) << err;
  return v;
}

fs::InodeId lookup(fs::Volume& v, fs::InodeId dir, const std::string& name) {
  fs::InodeId id;
  std::optional<fs::Attr> a, d;
  EXPECT_EQ(v.lookup(root(), dir, name, &id, &a, &d), Status::Ok) << name;
  return id;
}

fs::InodeId make_dir(fs::Volume& v, fs::InodeId parent, const std::string& name) {
  fs::InodeId id;
  std::optional<fs::Attr> attr;
  fs::Wcc wcc;
  EXPECT_EQ(v.mkdir(root(), parent, name, {}, &id, &attr, &wcc), Status::Ok);
  return id;
}

void write_file(fs::Volume& v, fs::InodeId dir, const std::string& name,
                const std::vector<uint8_t>& data) {
  fs::InodeId id;
  std::optional<fs::Attr> attr;
  fs::Wcc wcc;
  ASSERT_EQ(v.create(root(), dir, name, fs::CreateMode::Guarded, {}, 0, &id, &attr, &wcc), Status::Ok);
  fs::Stability committed;
  ASSERT_EQ(v.write(root(), id, 0, std::span(data.data(), data.size()), fs::Stability::FileSync,
                    &committed, &wcc), Status::Ok);
}

std::vector<uint8_t> read_file(fs::Volume& v, fs::InodeId dir, const std::string& name) {
  const fs::InodeId id = lookup(v, dir, name);
  std::vector<uint8_t> out;
  for (int i = 0; i < 1000; i++) {
    std::vector<uint8_t> part;
    bool eof = false;
    std::optional<fs::Attr> attr;
    if (v.read(root(), id, out.size(), 1 << 20, &part, &eof, &attr) != Status::Ok) return {0xde};
    out.insert(out.end(), part.begin(), part.end());
    if (eof) break;
  }
  return out;
}

// The shapes "N+M/b" of every group of the catalog lines of file `ino` (catalog_text.h).
std::vector<std::string> shapes_of(IfsVolume& v, const std::string& path) {
  std::string text;
  EXPECT_TRUE(v.directory_policy(path, &text)) << text;
  std::vector<std::string> out;
  const size_t at = text.find("groups:");
  if (at == std::string::npos) return out;
  std::istringstream in(text.substr(at + 7, text.find('\n', at) - at - 7));
  for (std::string s; in >> s;) out.push_back(s);
  return out;
}

TEST(IfsPolicyVolume, ADirectorysPolicyShapesNewGroupsAndAChangeIsRestripedInTheBackground) {
  testing::LocalIfsCluster cluster;
  const auto big = pattern(2 * kSlotBytes, 1), small = pattern(5000, 2), other = pattern(kSlotBytes, 3);
  {
    auto v = open_volume(&cluster);
    const fs::InodeId d = make_dir(*v, v->root(), "d");
    std::string msg;
    EXPECT_FALSE(v->set_directory_policy("/d", policy("+4n"), &msg));  // 5 nodes needed
    EXPECT_NE(msg.find("needs"), std::string::npos) << msg;
    EXPECT_FALSE(v->set_directory_policy("/nope", policy("+1n"), &msg));
    ASSERT_TRUE(v->set_directory_policy("/d", policy("+3d:1n"), &msg)) << msg;
    write_file(*v, d, "big", big);
    write_file(*v, d, "small", small);
    write_file(*v, v->root(), "other", other);
    uint64_t durable = 0;
    ASSERT_EQ(v->flush(&durable), Status::Ok);
    // New groups under /d: 6+3/3 (M 3, b 3); the small file mirrored M+1 = 4 ways.
    EXPECT_EQ(shapes_of(*v, "/d/big"), (std::vector<std::string>{"6+3/3", "6+3/3"}));
    EXPECT_EQ(shapes_of(*v, "/d/small"), (std::vector<std::string>{"1+3/3"}));
    EXPECT_EQ(shapes_of(*v, "/other"), (std::vector<std::string>{"6+2/2"}));
    std::string text;
    ASSERT_TRUE(v->directory_policy("/d/big", &text));
    EXPECT_NE(text.find("+3d:1n (inherited from /d)"), std::string::npos) << text;
    ASSERT_TRUE(v->directory_policy("/d", &text));
    EXPECT_NE(text.find("set on the directory itself"), std::string::npos) << text;

    // A change: the files already under /d are re-laid as +1n (3+1/1 on four nodes).
    ASSERT_TRUE(v->set_directory_policy("/d", policy("+1n"), &msg)) << msg;
    ASSERT_TRUE(v->directory_policy("/", &text));
    EXPECT_NE(text.find("3 of 4 groups wait"), std::string::npos) << text;
    {
      // Reads stay exact while the groups are re-laid under them (old record or new).
      std::atomic<bool> done{false};
      std::atomic<int> reads{0}, wrong{0};
      std::thread reader([&] {
        while (!done) {
          wrong += read_file(*v, d, "big") == big ? 0 : 1;
          wrong += read_file(*v, d, "small") == small ? 0 : 1;
          reads += 2;
        }
      });
      v->reprotect_now();
      done = true;
      reader.join();
      EXPECT_EQ(wrong.load(), 0) << "of " << reads.load() << " reads during the restripe";
      EXPECT_GT(reads.load(), 0);
    }
    EXPECT_EQ(shapes_of(*v, "/d/big"),
              (std::vector<std::string>{"3+1/1", "3+1/1", "3+1/1", "3+1/1"}));
    EXPECT_EQ(shapes_of(*v, "/d/small"), (std::vector<std::string>{"1+1/1"}));
    EXPECT_EQ(shapes_of(*v, "/other"), (std::vector<std::string>{"6+2/2"}));
    const ProtectionStatus st = v->group_status(10);
    EXPECT_EQ(st.groups_misshaped, 0u);
    EXPECT_EQ(st.job.kind, JobKind::Restripe);
    EXPECT_EQ(st.job.groups_restriped, 3u);
    EXPECT_EQ(read_file(*v, d, "big"), big);
    EXPECT_EQ(read_file(*v, d, "small"), small);
    const IfsVolume::FsckReport f = v->fsck();
    EXPECT_EQ(f.bad_parity + f.unreadable + f.lost, 0u);

    // A rename under the root keeps the groups until restriped back to the default.
    fs::Wcc a, b;
    ASSERT_EQ(v->rename(root(), d, "big", v->root(), "moved", &a, &b), Status::Ok);
    EXPECT_EQ(shapes_of(*v, "/moved").front(), "3+1/1");
    ASSERT_TRUE(v->directory_policy("/moved", &text));
    EXPECT_NE(text.find("the volume default"), std::string::npos) << text;
    v->reprotect_now();
    EXPECT_EQ(shapes_of(*v, "/moved").front(), "3+2/2");  // narrower groups are not merged
    EXPECT_EQ(read_file(*v, v->root(), "moved"), big);
    // Cleared: /d/small goes back to the volume's +2d:1n too.
    ASSERT_TRUE(v->set_directory_policy("/d", std::nullopt, &msg)) << msg;
    v->abandon();  // the coordinator dies before any pass: the policy is in the checkpoint
  }
  auto again = open_volume(&cluster);
  std::string text;
  ASSERT_TRUE(again->directory_policy("/d", &text));
  EXPECT_NE(text.find("the volume default"), std::string::npos) << text;
  again->reprotect_now();
  EXPECT_EQ(shapes_of(*again, "/d/small"), (std::vector<std::string>{"1+2/2"}));
  EXPECT_EQ(read_file(*again, lookup(*again, again->root(), "d"), "small"), small);
  EXPECT_EQ(read_file(*again, again->root(), "moved"), big);
  EXPECT_EQ(read_file(*again, again->root(), "other"), other);
}

TEST(IfsPolicyVolume, ASetPolicySurvivesANewCoordinator) {
  testing::LocalIfsCluster cluster;
  {
    auto v = open_volume(&cluster);
    make_dir(*v, make_dir(*v, v->root(), "p"), "q");
    std::string msg;
    ASSERT_TRUE(v->set_directory_policy("/p", policy("4+2/2"), &msg)) << msg;
    v->abandon();  // kill -9: only what reached the checkpoint counts
  }
  auto again = open_volume(&cluster);
  std::string text;
  ASSERT_TRUE(again->directory_policy("/p/q", &text));
  EXPECT_NE(text.find("4+2/2 (inherited from /p)"), std::string::npos) << text;
}

}  // namespace
}  // namespace nasd::scaleout
