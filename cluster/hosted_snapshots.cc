// `nasd-admin snapshot create|list|delete VOLUME [NAME]` for the volumes this node hosts.
#include <time.h>

#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "cluster/hosted_volumes.h"
#include "fs/lfs/lfs_volume.h"

namespace nasd::cluster {
namespace {

constexpr const char* kUsage =
    "usage: snapshot create VOLUME NAME | snapshot delete VOLUME NAME | snapshot list [VOLUME]";

std::string utc(int64_t t) {
  time_t tt = time_t(t);
  struct tm tm;
  gmtime_r(&tt, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string human(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    u++;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

// One block per volume: a header line, a column line, one line per snapshot (name, date and
// time UTC, exclusive bytes, the same in human units). The management page shows it as is.
std::string list_snapshots(const std::string& volume, fs::lfs::LfsVolume& lfs) {
  std::vector<fs::lfs::LfsVolume::SnapshotListing> list;
  fs::Status st = lfs.snapshot_list(&list);
  if (st != fs::Status::Ok)
    throw std::runtime_error("snapshot list " + volume + ": " + fs::status_name(st));
  std::ostringstream out;
  out << "volume " << volume << ": " << list.size() << " snapshots, "
      << human(lfs.snapshot_held_bytes()) << " of segments held for them\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-32s %-19s %14s\n", "NAME", "TAKEN (UTC)", "EXCLUSIVE");
  out << line;
  for (const auto& s : list) {
    std::snprintf(line, sizeof line, "%-32s %-19s %14llu  (%s)\n", s.info.name.c_str(),
                  utc(s.info.time).c_str(), static_cast<unsigned long long>(s.exclusive_bytes),
                  human(s.exclusive_bytes).c_str());
    out << line;
  }
  return out.str();
}

}  // namespace

std::string HostedVolumes::snapshot_command(const std::vector<std::string>& args) {
  if (args.size() == 1 && args[0] == "list") {
    // Every volume open here (what the management page shows).
    std::vector<std::pair<std::string, std::shared_ptr<fs::lfs::LfsVolume>>> all;
    {
      std::lock_guard lock(mu_);
      for (const auto& [id, h] : open_)
        if (h.lfs) all.push_back({h.name, h.lfs});  // a scale-out volume keeps no snapshots
    }
    std::string out;
    for (const auto& [name, lfs] : all) out += list_snapshots(name, *lfs);
    return out.empty() ? "no volume is open on this node\n" : out;
  }
  if (args.size() < 2) throw std::invalid_argument(kUsage);
  const std::string &verb = args[0], &volume = args[1];
  std::shared_ptr<fs::lfs::LfsVolume> lfs;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, h] : open_)
      if (h.name == volume) lfs = h.lfs;
  }
  bool scale_out = false;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, h] : open_) scale_out |= h.name == volume && h.ifs != nullptr;
  }
  if (scale_out) throw std::invalid_argument("volume " + volume + " is a scale-out volume: it has no snapshots yet");
  if (!lfs)
    throw std::invalid_argument("volume " + volume +
                                " is not open on this node (ask the node that serves it)");
  if (verb == "list") {
    if (args.size() != 2) throw std::invalid_argument(kUsage);
    return list_snapshots(volume, *lfs);
  }
  if (args.size() != 3) throw std::invalid_argument(kUsage);
  const std::string& name = args[2];
  if (verb == "create") {
    // No separate journal flush is needed: every acknowledged mutation was applied to the LFS
    // before its reply (nvram/journal_volume.h), and the snapshot is a checkpoint of that state.
    fs::lfs::SnapshotInfo info;
    fs::Status st = lfs->snapshot_create(name, &info);
    if (st == fs::Status::Exist) throw std::invalid_argument("snapshot " + name + " exists");
    if (st == fs::Status::Inval)
      throw std::invalid_argument("snapshot names are 1-60 bytes without '/'");
    if (st == fs::Status::NoSpc)
      throw std::runtime_error("volume " + volume + " keeps the most snapshots it can (" +
                               std::to_string(fs::lfs::kMaxSnapshots) + "); delete one first");
    if (st != fs::Status::Ok)
      throw std::runtime_error("snapshot create " + name + ": " + fs::status_name(st));
    return "snapshot " + name + " of volume " + volume + " taken at " + utc(info.time) +
           " UTC (id " + std::to_string(info.id) + ")\n";
  }
  if (verb == "delete") {
    fs::Status st = lfs->snapshot_delete(name);
    if (st == fs::Status::NoEnt) throw std::invalid_argument("no snapshot " + name);
    if (st != fs::Status::Ok)
      throw std::runtime_error("snapshot delete " + name + ": " + fs::status_name(st));
    return "snapshot " + name + " of volume " + volume + " deleted\n";
  }
  throw std::invalid_argument(kUsage);
}

}  // namespace nasd::cluster
