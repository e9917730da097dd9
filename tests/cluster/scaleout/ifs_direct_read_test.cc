// Direct reads of the scale-out volume (cluster/scaleout/read_layout.h): a layout taken from
// the coordinator and read later from the units by another node gives exactly the bytes a READ
// on the coordinator gave at that instant, or fails (and is asked again) — never other bytes.
// A deterministic simulation drives it with random interleavings of writes, flushes (whose
// superseded units are deleted), truncates, removes, the loss of a node and reads whose layout
// is taken at one step and whose units are read many steps later, through one reader whose
// group cache lives across the whole run. NASD_SIM_RUNS sets the number of seeds.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>

#include "cluster/scaleout/direct_reader.h"
#include "cluster/scaleout/ifs_volume.h"
#include "cluster/scaleout/read_layout.h"
#include "cluster/scaleout/unit_codec.h"
#include "tests/cluster/scaleout/local_ifs_cluster.h"

namespace nasd::scaleout {
namespace {

using fs::Status;

fs::OpContext root() {
  fs::OpContext c;
  c.cred.uid = 0;
  c.cred.gid = 0;
  return c;
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

struct Pending {
  ReadLayout layout;
  Status want_status = Status::Ok;
  std::vector<uint8_t> want;
  bool want_eof = false;
  uint64_t want_size = 0;
  int step = 0;
};

// The coordinator's READ and the layout taken at the same instant.
Pending snapshot(IfsVolume& v, fs::InodeId id, uint64_t offset, uint32_t count, int step) {
  Pending p;
  p.step = step;
  std::optional<fs::Attr> attr;
  p.want_status = v.read(root(), id, offset, count, &p.want, &p.want_eof, &attr);
  p.want_size = attr ? attr->size : 0;
  EXPECT_EQ(v.read_layout(root(), id, offset, count, &p.layout), p.want_status);
  return p;
}

// Reads the layout's units now. True when it read; then the bytes must be the instant's.
bool complete(DirectReader& reader, const Pending& p, uint64_t seed, int now) {
  EXPECT_EQ(p.layout.status, p.want_status) << "seed " << seed << " step " << p.step;
  if (p.layout.status != Status::Ok) return true;
  EXPECT_EQ(p.layout.eof, p.want_eof) << "seed " << seed << " step " << p.step;
  EXPECT_EQ(p.layout.attr ? p.layout.attr->size : 0, p.want_size);
  std::vector<uint8_t> got;
  std::string why;
  if (!reader.read(p.layout, &got, &why)) return false;
  EXPECT_TRUE(got == p.want) << "seed " << seed << ": a layout taken at step " << p.step
                             << " and read at step " << now << " gave other bytes ("
                             << got.size() << " vs " << p.want.size() << ")";
  return true;
}

TEST(IfsDirectRead, ALayoutReadLaterGivesTheBytesOfItsInstantOrFails) {
  const char* env = std::getenv("NASD_SIM_RUNS");
  const int runs = env ? std::atoi(env) : 5;
  uint64_t stale_ok = 0, stale_failed = 0, fresh = 0;
  for (int run = 0; run < runs; run++) {
    const uint64_t seed = 1000 + uint64_t(run);
    std::mt19937_64 rng(seed);
    testing::LocalIfsCluster cluster;
    auto v = open_volume(&cluster);
    DirectReader reader(cluster.units());
    std::vector<fs::InodeId> ids(3);
    auto create = [&](size_t i) {
      std::optional<fs::Attr> attr;
      fs::Wcc wcc;
      ASSERT_EQ(v->create(root(), v->root(), "f" + std::to_string(i), fs::CreateMode::Unchecked,
                          {}, 0, &ids[i], &attr, &wcc),
                Status::Ok);
    };
    for (size_t i = 0; i < ids.size(); i++) create(i);
    std::vector<fs::InodeId> gone;  // removed files: their layouts answer Stale
    std::vector<Pending> pending;
    bool killed = false;
    for (int step = 0; step < 260; step++) {
      const size_t f = rng() % ids.size();
      const int r = int(rng() % 100);
      if (r < 28) {
        const uint64_t off = rng() % (3 * kSlotBytes);
        std::vector<uint8_t> data(1 + rng() % (kSlotBytes + kSlotBytes / 2));
        for (auto& b : data) b = uint8_t(rng());
        fs::Stability committed;
        fs::Wcc wcc;
        ASSERT_EQ(v->write(root(), ids[f], off, data, fs::Stability::FileSync, &committed, &wcc), Status::Ok);
      } else if (r < 38) {
        uint64_t durable = 0;
        ASSERT_EQ(v->flush(&durable), Status::Ok) << "seed " << seed;
      } else if (r < 43) {
        fs::SetAttr sa;
        sa.size = rng() % (3 * kSlotBytes);
        fs::Wcc wcc;
        ASSERT_EQ(v->setattr(root(), ids[f], sa, std::nullopt, &wcc), Status::Ok);
      } else if (r < 46) {
        fs::Wcc wcc;
        ASSERT_EQ(v->remove(root(), v->root(), "f" + std::to_string(f), &wcc), Status::Ok);
        gone.push_back(ids[f]);
        create(f);
      } else if (r < 47 && !killed && step > 80) {
        cluster.kill(uint32_t(1 + rng() % 4));  // one node: every group stays readable
        killed = true;
      } else if (r < 74) {
        const fs::InodeId id = !gone.empty() && rng() % 8 == 0 ? gone[rng() % gone.size()] : ids[f];
        pending.push_back(snapshot(*v, id, rng() % (3 * kSlotBytes), uint32_t(1 + rng() % (2 * kSlotBytes)), step));
      } else if (!pending.empty()) {
        const size_t k = rng() % pending.size();
        (complete(reader, pending[k], seed, step) ? stale_ok : stale_failed)++;
        pending.erase(pending.begin() + long(k));
        // A layout read at once always reads (at most one node is lost).
        Pending now = snapshot(*v, ids[f], rng() % (3 * kSlotBytes), uint32_t(1 + rng() % (2 * kSlotBytes)), step);
        EXPECT_TRUE(complete(reader, now, seed, step)) << "seed " << seed << ": a fresh layout did not read";
        fresh++;
      }
      if (::testing::Test::HasFailure()) return;
    }
    for (const Pending& p : pending) (complete(reader, p, seed, 260) ? stale_ok : stale_failed)++;
    if (::testing::Test::HasFailure()) return;
  }
  std::printf("%d runs: %llu fresh direct reads, %llu late layouts read, %llu late layouts refused\n",
              runs, (unsigned long long)fresh, (unsigned long long)stale_ok,
              (unsigned long long)stale_failed);
  EXPECT_GT(fresh, 0u);
  EXPECT_GT(stale_ok, 0u);
}

ReadLayout sample_layout() {
  ReadLayout l;
  l.status = Status::Ok;
  fs::Attr a;
  a.type = fs::FileType::Reg;
  a.size = 5 * kSlotBytes;
  l.attr = a;
  l.eof = false;
  l.offset = kSlotBytes - 100;
  l.length = 2 * kSlotBytes;
  l.pieces.push_back(LayoutPiece{kSlotBytes, std::vector<uint8_t>(4000, 7)});
  GroupRecord g;
  g.file = 9;
  g.group = 2;
  g.version = 77;
  g.offset = 0;
  g.length = kSlotBytes;
  g.shape = GroupShape{6, 2, 2, false};
  for (uint32_t i = 0; i < 8; i++) g.places.push_back(UnitPlace{1 + i % 4, i / 4});
  l.records.push_back(g);
  g.offset = 2 * kSlotBytes;
  g.version = 78;
  l.records.push_back(g);
  return l;
}

TEST(IfsLayoutCodec, RoundTripsAndRefusesWhatIsOutOfBounds) {
  const ReadLayout l = sample_layout();
  const std::vector<uint8_t> bytes = encode_layout_reply(l);
  ReadLayout back;
  ASSERT_TRUE(decode_layout_reply(bytes, &back));
  EXPECT_EQ(encode_layout_reply(back), bytes);
  EXPECT_EQ(back.records.size(), 2u);
  EXPECT_EQ(back.records[1].version, 78u);
  EXPECT_EQ(back.pieces[0].bytes.size(), 4000u);
  for (size_t cut = 0; cut < bytes.size(); cut += 7)
    EXPECT_FALSE(decode_layout_reply(std::span(bytes.data(), cut), &back)) << cut;
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_FALSE(decode_layout_reply(longer, &back)) << "trailing bytes";
  ReadLayout outside = l;
  outside.pieces[0].offset = l.offset + l.length - 10;  // runs past the answer's end
  EXPECT_FALSE(decode_layout_reply(encode_layout_reply(outside), &back));
  ReadLayout far = l;
  far.records[0].offset = 10 * kSlotBytes;  // names bytes the READ did not ask for
  EXPECT_FALSE(decode_layout_reply(encode_layout_reply(far), &back));
  ReadLayout drive = l;
  drive.records[0].places[3].drive = kMaxDrivesPerNode;
  EXPECT_FALSE(decode_layout_reply(encode_layout_reply(drive), &back));
  ReadLayout shape = l;
  shape.records[0].shape.data = kMaxData + 1;
  EXPECT_FALSE(decode_layout_reply(encode_layout_reply(shape), &back));

  LayoutRequest req;
  req.volume_id = 1000;
  req.ctx.cred.uid = 5;
  req.ctx.cred.gid = 6;
  req.id = fs::InodeId{42, 3};
  req.offset = 1 << 20;
  req.count = 65536;
  LayoutRequest req_back;
  ASSERT_TRUE(decode_layout_request(encode_layout_request(req), &req_back));
  EXPECT_EQ(req_back.volume_id, 1000u);
  EXPECT_EQ(req_back.ctx.cred.uid, 5u);
  EXPECT_EQ(req_back.id.ino, 42u);
  EXPECT_EQ(req_back.count, 65536u);
  req.count = kMaxLayoutBytes + 1;
  EXPECT_FALSE(decode_layout_request(encode_layout_request(req), &req_back));

  // Assembly: zeros, then the records' bytes, then the pieces.
  std::vector<uint8_t> g0(kSlotBytes, 1), g1(kSlotBytes, 2), out;
  ASSERT_TRUE(assemble_read(l, {g0, g1}, &out));
  ASSERT_EQ(out.size(), l.length);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[100], 7);
  EXPECT_EQ(out[100 + 4000], 0);
  EXPECT_EQ(out[l.length - 1], 2);
  EXPECT_FALSE(assemble_read(l, {g0}, &out));

  // The fuzzer's seeds (tests/fuzz/cluster/seeds/ifs_layout_*).
  if (const char* dir = std::getenv("NASD_WRITE_LAYOUT_SEEDS")) {
    auto save = [&](const std::string& name, const std::vector<uint8_t>& b) {
      std::FILE* f = std::fopen((std::string(dir) + "/ifs_layout_" + name).c_str(), "wb");
      ASSERT_TRUE(f);
      std::fwrite(b.data(), 1, b.size(), f);
      std::fclose(f);
    };
    req.count = 65536;
    save("request", encode_layout_request(req));
    save("reply", bytes);
    ReadLayout stale;
    stale.status = Status::Stale;
    save("reply_stale", encode_layout_reply(stale));
    ReadLayout one = l;
    one.pieces.clear();
    one.records.resize(1);
    save("reply_one_group", encode_layout_reply(one));
  }
}

}  // namespace
}  // namespace nasd::scaleout
