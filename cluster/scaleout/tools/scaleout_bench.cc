// nasd-scaleout-bench: the scale-out data path in one process (four nodes of four drives, each
// drive a unit store in a backing file under DIR), against a single-node LFS volume on the
// same disk. Prints one line per measurement; bench/scaleout_bench.sh turns them into ratios.
//   nasd-scaleout-bench DIR [MiB]
// Measures: streaming write and read (6+2/2), degraded read (one node down), re-protect after
// losing that node (the FlexProtect job through JobDriver), rebalance onto a fifth node added
// then (AutoBalance), a restripe of every group to +3d:1n after it (SetProtectPlus: every
// file's directory policy changed), the same writes mirrored 3 ways
// (1+2 groups), and CPU seconds (user+sys of this process) for each.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include "cluster/scaleout/group_io.h"
#include "cluster/scaleout/job_driver.h"
#include "fs/lfs/lfs_volume.h"

using namespace nasd;
using namespace nasd::scaleout;

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct Meter {
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  double c0 = cpu_seconds();
  void report(const char* name, double mib) {
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_seconds() - c0;
    std::printf("%-22s %8.1f MiB %8.3f s %9.1f MiB/s  cpu %7.3f s  %8.3f cpu-ms/MiB\n", name, mib,
                wall, mib / wall, cpu, 1000.0 * cpu / mib);
    std::fflush(stdout);
  }
};

int fail(const std::string& why) {
  std::fprintf(stderr, "nasd-scaleout-bench: %s\n", why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: nasd-scaleout-bench DIR [MiB]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const uint64_t mib = argc > 2 ? std::stoull(argv[2]) : 192;
  const uint64_t bytes = mib << 20;
  std::filesystem::create_directories(dir);
  std::vector<uint8_t> data(bytes);
  std::mt19937_64 rng(1);
  for (size_t i = 0; i < bytes; i += 8) {
    const uint64_t v = rng();
    std::memcpy(data.data() + i, &v, std::min<size_t>(8, bytes - i));
  }

  // ---- the single-node LFS volume ----
  {
    fs::lfs::LfsOptions o;
    o.backing = dir + "/lfs.img";
    o.size = bytes * 3 + (256ull << 20);
    o.preallocate = false;
    std::string err;
    auto vol = fs::lfs::LfsVolume::open_or_create(o, &err);
    if (!vol) return fail("lfs: " + err);
    fs::OpContext ctx;
    ctx.cred.uid = 0;
    ctx.cred.gid = 0;
    fs::InodeId id{};
    std::optional<fs::Attr> attr;
    fs::Wcc wcc;
    if (vol->create(ctx, vol->root(), "stream", fs::CreateMode::Unchecked, fs::SetAttr{}, 0, &id,
                    &attr, &wcc) != fs::Status::Ok) {
      return fail("lfs create");
    }
    Meter w;
    constexpr size_t kChunk = 1 << 20;
    for (uint64_t off = 0; off < bytes; off += kChunk) {
      fs::Stability got;
      const size_t n = std::min<uint64_t>(kChunk, bytes - off);
      if (vol->write(ctx, id, off, std::span<const uint8_t>(data.data() + off, n),
                     fs::Stability::Unstable, &got, &wcc) != fs::Status::Ok) {
        return fail("lfs write");
      }
    }
    if (vol->commit(ctx, id, 0, 0, &wcc) != fs::Status::Ok) return fail("lfs commit");
    w.report("lfs-write", mib);
    Meter r;
    std::vector<uint8_t> out;
    for (uint64_t off = 0; off < bytes; off += kChunk) {
      bool eof = false;
      if (vol->read(ctx, id, off, kChunk, &out, &eof, &attr) != fs::Status::Ok) {
        return fail("lfs read");
      }
    }
    r.report("lfs-read", mib);
  }

  // ---- four nodes of four drives ----
  std::vector<std::unique_ptr<NodeUnits>> nodes;
  LocalUnits units;
  Topology topo;
  for (uint32_t id = 1; id <= 4; ++id) {
    std::unique_ptr<NodeUnits> n;
    std::string err;
    if (!NodeUnits::open(dir + "/node" + std::to_string(id), 1, id, 4, &n, &err)) return fail(err);
    units.add(n.get());
    nodes.push_back(std::move(n));
    NodeState s;
    s.id = id;
    s.drives.resize(4);
    topo.nodes.push_back(s);
  }
  GroupIo io(&units);
  // The write-behind's batch end: every drive synced once (as LFS's commit does).
  auto sync_all = [&] {
    for (uint32_t n = 1; n <= 4; ++n) {
      for (uint32_t d = 0; d < 4; ++d) io.sync_drive(UnitPlace{n, d});
    }
  };
  ProtectionPolicy policy;
  std::string err;
  std::vector<GroupRecord> groups;
  // One group id per group (as a volume numbers them), so placement spreads them over nodes.
  for (uint64_t off = 0, g = 0; off < bytes; ++g) {
    std::vector<GroupRecord> one;
    const uint64_t take = std::min<uint64_t>(bytes - off, 6 * kStripeUnit);
    if (!GroupIo::plan_extent(policy, topo, 1, g, 1 + g * 100, off, take, &one, &err)) return fail(err);
    groups.insert(groups.end(), one.begin(), one.end());
    off += take;
  }
  {
    Meter w;
    for (const GroupRecord& g : groups) {
      std::vector<int> failed;
      if (!io.write_group(g, data.data() + g.offset, &failed, &err, false)) return fail(err);
    }
    sync_all();
    w.report("scaleout-write-6+2", mib);
  }
  auto read_all = [&](const char* name) -> bool {
    Meter r;
    std::vector<uint8_t> out;
    for (const GroupRecord& g : groups) {
      if (!io.read_group(g, &out, nullptr, &err) ||
          std::memcmp(out.data(), data.data() + g.offset, g.length) != 0) {
        return false;
      }
    }
    r.report(name, mib);
    return true;
  };
  if (!read_all("scaleout-read")) return fail("read: " + err);

  // Mirroring: the same bytes as one-unit groups, each copied 3 ways (1+2).
  {
    std::vector<GroupRecord> mirrors;
    Meter w;
    for (uint64_t off = 0, g = 0; off < bytes; off += kStripeUnit, ++g) {
      GroupRecord r;
      const uint64_t n = std::min<uint64_t>(kStripeUnit, bytes - off);
      if (!GroupIo::plan(policy, topo, 2, g, 1, n, &r, &err)) return fail(err);
      r.offset = off;
      std::vector<int> failed;
      if (!io.write_group(r, data.data() + off, &failed, &err, false)) return fail(err);
      mirrors.push_back(r);
    }
    sync_all();
    w.report("mirror-write-3x", mib);
    for (const GroupRecord& r : mirrors) io.delete_group(r);
  }

  // Codec alone: encode CPU for 6+2 parity against making two copies.
  {
    ErasureCodec c(6, 2);
    std::vector<uint8_t> p0(kStripeUnit), p1(kStripeUnit);
    Meter e;
    for (uint64_t off = 0; off + 6 * kStripeUnit <= bytes; off += 6 * kStripeUnit) {
      const uint8_t* d[6];
      for (int i = 0; i < 6; ++i) d[i] = data.data() + off + i * kStripeUnit;
      uint8_t* p[2] = {p0.data(), p1.data()};
      c.encode(kStripeUnit, d, p);
    }
    e.report("encode-6+2", mib);
    Meter m;
    for (uint64_t off = 0; off + kStripeUnit <= bytes; off += kStripeUnit) {
      std::memcpy(p0.data(), data.data() + off, kStripeUnit);
      std::memcpy(p1.data(), data.data() + off, kStripeUnit);
    }
    m.report("copy-2x", mib);
  }

  // One node down: degraded reads, then the re-protect job back to full protection.
  units.set_down(3, true);
  if (!read_all("scaleout-read-degraded")) return fail("degraded read: " + err);
  topo.nodes[2].alive = false;
  JobConfig jc;
  ProtectionJob job(jc, 1, topo);
  job.load(groups);
  job.topology_changed(0, topo);
  JobDriver driver(&job, &units, policy);
  {
    Meter p;
    driver.run(0);
    p.report("reprotect", mib);
  }
  JobProgress prog = job.progress();
  std::printf("reprotect: %llu groups, %llu units rebuilt, %llu degraded left, %llu unrecoverable\n",
              static_cast<unsigned long long>(prog.done),
              static_cast<unsigned long long>(prog.units_rebuilt),
              static_cast<unsigned long long>(prog.groups_degraded),
              static_cast<unsigned long long>(prog.unrecoverable));
  groups.clear();
  for (const auto& [e, r] : job.catalog()) groups.push_back(r);
  if (!read_all("scaleout-read-reprotected")) return fail("read after re-protect: " + err);
  if (prog.groups_degraded != 0 || prog.unrecoverable != 0) return 1;

  // A new node (5) joins the three survivors: the rebalance job gives it its share. The rate
  // is the volume's data per second of the whole job (every group is looked at; those that
  // move are re-striped in full under a fresh version).
  {
    std::unique_ptr<NodeUnits> n;
    if (!NodeUnits::open(dir + "/node5", 1, 5, 4, &n, &err)) return fail(err);
    units.add(n.get());
    nodes.push_back(std::move(n));
    NodeState s;
    s.id = 5;
    s.drives.resize(4);
    topo.nodes.push_back(s);
  }
  job.topology_changed(1, topo);
  {
    Meter b;
    driver.run(1);
    b.report("rebalance", mib);
  }
  prog = job.progress();
  uint64_t on_new = 0, all_units = 0;
  for (const auto& [e, r] : job.catalog()) {
    for (const UnitPlace& u : r.places) {
      on_new += u.node == 5 ? 1 : 0;
      ++all_units;
    }
  }
  std::printf("rebalance: %llu of %llu groups moved, %llu units written, node 5 holds %llu of %llu units, %llu unbalanced left\n",
              static_cast<unsigned long long>(prog.groups_moved),
              static_cast<unsigned long long>(prog.groups),
              static_cast<unsigned long long>(prog.units_rebuilt),
              static_cast<unsigned long long>(on_new), static_cast<unsigned long long>(all_units),
              static_cast<unsigned long long>(prog.groups_unbalanced));
  groups.clear();
  for (const auto& [e, r] : job.catalog()) groups.push_back(r);
  if (!read_all("scaleout-read-rebalanced")) return fail("read after rebalance: " + err);
  if (prog.groups_unbalanced != 0 || prog.unrecoverable != 0) return 1;

  // Every file's directory is set to +3d:1n (OneFS SetProtectPlus): the restripe job re-lays
  // every group with three parity units, under fresh versions, on the four nodes alive.
  JobConfig rc;
  std::string perr;
  ProtectionPolicy plus3;
  if (!parse_protection_policy("+3d:1n", &plus3, &perr)) return fail(perr);
  for (const GroupRecord& r : groups) rc.file_policy[r.file] = plus3;
  ProtectionJob restripe(rc, 2, topo);
  restripe.load(groups);
  restripe.topology_changed(2, topo);
  JobDriver rdriver(&restripe, &units, policy);
  {
    Meter r;
    rdriver.run(2);
    r.report("restripe", mib);
  }
  prog = restripe.progress();
  std::printf("restripe to +3d:1n: %llu of %llu groups re-laid, %llu units written, %llu left\n",
              static_cast<unsigned long long>(prog.groups_restriped),
              static_cast<unsigned long long>(prog.total),
              static_cast<unsigned long long>(prog.units_rebuilt),
              static_cast<unsigned long long>(prog.groups_misshaped));
  groups.clear();
  for (const auto& [e, r] : restripe.catalog()) groups.push_back(r);
  if (!read_all("scaleout-read-restriped")) return fail("read after restripe: " + err);
  return prog.groups_misshaped == 0 && prog.unrecoverable == 0 ? 0 : 1;
}
