#include "cluster/hosted_volumes.h"

#include <chrono>
#include <sstream>
#include <stdexcept>

#include "cluster/scaleout/ifs_volume.h"
#include "fs/lfs/lfs_volume.h"
#include "fs/lfs/options.h"
#include "nvram/journal.h"
#include "nvram/journal_volume.h"
#include "nvram/reply_window.h"
#include "util/log.h"

namespace nasd::cluster {
namespace {

std::string describe(const nvram::ReplayReport& r) {
  std::ostringstream out;
  out << "recovered to journal seq " << r.durable_seq_before << ", replayed " << r.applied
      << " of " << r.records << " NVRAM records (" << r.skipped << " already on disk, "
      << r.failed << " failed)";
  return out.str();
}

// The partner's records, from this node's copy of its NVRAM, with the ordinary journal code.
// The replay ends with the file system flushed, so the copy is not needed afterwards.
// `carried` (the reply window so far) gains the partner's recorded replies.
nvram::ReplayReport replay_partner_nvram(const std::string& region_copy,
                                         std::shared_ptr<fs::JournalTarget> target,
                                         fs::RecoveredCallSink* replies,
                                         std::vector<std::vector<uint8_t>>* carried,
                                         bool own_journal) {
  nvram::JournalOptions o;
  o.path = region_copy;
  o.size = 0;  // whatever size the partner's region has
  o.flush_interval = std::chrono::hours(1);
  std::shared_ptr<nvram::Journal> journal = nvram::Journal::open(o);
  nvram::ReplayReport report;
  {
    nvram::JournalVolume replaying(journal, std::move(target));
    report = replaying.recover(replies, *carried);
    *carried = replaying.reply_window();
    // The partner may have logged records beyond this copy: never let them replay over ours.
    // With a journal here the node's own JournalVolume makes the move (open() below); without
    // one (`own_journal` false) the fs must hold it.
    if (!own_journal) {
      if (fs::Status st = replaying.skip_past_previous_owner(/*durable_now=*/true);
          st != fs::Status::Ok)
        throw std::runtime_error("moving the journal sequence past the partner's: " +
                                 std::string(fs::status_name(st)));
    }
  }
  journal->shutdown();
  return report;
}

}  // namespace

HostedVolumes::HostedVolumes(std::shared_ptr<nvram::Journal> journal,
                             std::shared_ptr<fs::RecoveredCallSink> replies)
    : journal_(std::move(journal)), replies_(std::move(replies)) {}

HostedVolumes::~HostedVolumes() {
  std::lock_guard lock(mu_);
  for (auto& [id, h] : open_) close_hosted(id, h, false);
}

std::shared_ptr<fs::Volume> HostedVolumes::open(const ConfigSection& section, const Config& config,
                                                const std::string& base_dir,
                                                const std::string& partner_nvram,
                                                std::shared_ptr<fs::lfs::WriteGate> write_gate,
                                                std::function<bool()> owned) {
  std::shared_ptr<fs::lfs::LfsVolume> lfs;
  std::shared_ptr<scaleout::IfsVolume> ifs;
  std::shared_ptr<fs::JournalTarget> target;
  uint32_t volume_id = 0;
  std::string what;
  std::string err;
  if (scaleout::IfsOptions::is_scaleout(section)) {
    // Striped over every node's drives: nothing in base_dir but the reply window.
    const scaleout::IfsOptions o = scaleout::IfsOptions::from_config(section);
    volume_id = o.volume_id;
    what = "volume " + section.name() + " (id " + std::to_string(volume_id) + ", scale-out)";
    if (!scaleout_) throw std::runtime_error(what + ": this node has no scale-out drives (an N-node failover cluster is needed)");
    if (!journal_) throw std::runtime_error(what + ": needs the NVRAM journal ([nvram] mode = off)");
    ifs = scaleout::IfsVolume::open(o, scaleout_, &err);
    if (!ifs) throw std::runtime_error(what + ": " + err);
    target = ifs;
  } else {
    fs::lfs::LfsOptions opts = fs::lfs::LfsOptions::from_config(section, config, base_dir);
    opts.write_gate = std::move(write_gate);
    volume_id = opts.volume_id;
    what = "volume " + section.name() + " (id " + std::to_string(opts.volume_id) + ")";
    lfs = fs::lfs::LfsVolume::open_or_create(opts, &err);
    if (!lfs) throw std::runtime_error(what + ": " + err);
    target = lfs;
  }
  auto abandon = [&] {
    if (lfs) lfs->abandon();
    if (ifs) ifs->abandon();
  };
  // Beside the volume where every opener finds it (the shared folder of an HA pair), not beside
  // the backing, which may be a block device.
  const std::string replies_file =
      (base_dir.empty() ? std::string(".") : base_dir) + "/" + section.name() + ".replies";
  Hosted h{section.name(), replies_file, lfs, ifs, nullptr};
  std::vector<std::vector<uint8_t>> carried;
  if (journal_) {
    std::string error;
    if (!nvram::load_reply_window(h.replies_file, &carried, &error))
      util::log("cluster").warn(what + ": saved replies ignored (the reply cache starts without them): " + error);
  }
  if (!partner_nvram.empty()) {
    try {
      util::log("cluster").info(
          what + ": partner's NVRAM " +
          describe(replay_partner_nvram(partner_nvram, target, replies_.get(), &carried,
                                        journal_ != nullptr)));
    } catch (const std::exception& e) {
      abandon();
      throw std::runtime_error(what + ": replaying the partner's NVRAM: " + e.what());
    }
  }
  std::shared_ptr<fs::Volume> served = target;
  if (journal_) {
    h.journaled = std::make_shared<nvram::JournalVolume>(journal_, target, owned);
    // Not once the lease has lapsed: the window may then hold the reply of a call that is in
    // no file system (in flight when this node stopped), and the next owner may have opened
    // the volume and be saving its own window into the same file.
    h.journaled->save_window_before_trims(
        [path = h.replies_file, name = h.name,
         owned = std::move(owned)](const std::vector<std::vector<uint8_t>>& window) {
          if (owned && !owned()) return;
          std::string error;
          if (!nvram::save_reply_window(path, window, &error))
            util::log("cluster").warn("volume " + name + ": saving its recent replies failed (" +
                                      error + "); a crash now would forget them");
        });
    util::log("cluster").info(what + ": " +
                              describe(h.journaled->recover(replies_.get(), carried)));
    // A takeover: its mutations go above any record the previous owner may still replay.
    if (!partner_nvram.empty()) (void)h.journaled->skip_past_previous_owner(/*durable_now=*/false);
    served = h.journaled;
  }
  if (ifs) ifs->start_protection();
  std::lock_guard lock(mu_);
  if (open_.count(volume_id)) {
    abandon();
    throw std::logic_error(what + " is open already");
  }
  open_[volume_id] = std::move(h);
  // Replayed: from now on the other nodes may ask it where their READs' bytes are (each answer
  // still passes the lease check the deployment gave the IfsNode).
  if (ifs) scaleout_->coordinating(ifs);
  return served;
}

bool HostedVolumes::close_hosted(uint32_t id, Hosted& h, bool clean) {
  if (h.ifs && scaleout_) scaleout_->coordinating(nullptr);
  // The router already sends new requests elsewhere, but some may be running: wait for them,
  // so that the flush below holds every mutation the next owner has no record of.
  if (h.journaled) h.journaled->seal();
  if (clean && h.journaled) {
    // Before the flush lets the journal trim the records that hold them.
    std::string error;
    if (!nvram::save_reply_window(h.replies_file, h.journaled->reply_window(), &error))
      util::log("cluster").warn("volume " + h.name + ": saving its recent replies failed (" + error +
           "): retransmissions after the hand-over run again");
  }
  bool flushed = false;
  if (h.ifs) {
    if (clean) {
      flushed = h.ifs->close() == fs::Status::Ok;
      if (!flushed)
        util::log("cluster").error("volume " + h.name + ": write-behind and checkpoint at close failed (its records stay in NVRAM)");
    } else {
      h.ifs->abandon();
    }
  } else if (clean) {
    uint64_t durable = 0;
    const fs::Status flush = h.lfs->flush(&durable);
    fs::Status st = h.lfs->close();
    if (st != fs::Status::Ok) util::log("cluster").error("volume " + h.name + ": checkpoint at close failed");
    flushed = flush == fs::Status::Ok && st == fs::Status::Ok;
  } else {
    h.lfs->abandon();
  }
  if (journal_) {
    // Its records the file system holds are freed; newer ones wait for the next opener.
    journal_->detach(id, h.ifs ? static_cast<fs::JournalTarget*>(h.ifs.get()) : h.lfs.get());
    journal_->trim();
  }
  util::log("cluster").info("volume " + h.name + (clean ? ": closed" : ": abandoned (lease lost), nothing more written"));
  return flushed;
}

bool HostedVolumes::close(uint32_t id, bool clean) {
  Hosted h;
  {
    std::lock_guard lock(mu_);
    auto it = open_.find(id);
    if (it == open_.end()) return false;
    h = std::move(it->second);
    open_.erase(it);
  }
  return close_hosted(id, h, clean);
}

void HostedVolumes::close_all() {
  std::map<uint32_t, Hosted> all;
  {
    std::lock_guard lock(mu_);
    all.swap(open_);
  }
  for (auto& [id, h] : all) close_hosted(id, h, true);
}

std::string HostedVolumes::status() const {
  std::lock_guard lock(mu_);
  std::ostringstream out;
  for (const auto& [id, h] : open_) {
    if (h.lfs) out << h.lfs->status_text() << "\n";
    else out << "volume " << h.name << " (scale-out, coordinated here)\n" << h.ifs->health().text() << "\n";
  }
  return out.str();
}

std::string HostedVolumes::protection_command(const std::vector<std::string>& args) const {
  std::vector<std::pair<std::string, std::shared_ptr<scaleout::IfsVolume>>> coordinated;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, h] : open_)
      if (h.ifs) coordinated.emplace_back(h.name, h.ifs);
  }
  // `protection scrub VOLUME` and `protection catalog VOLUME`: one coordinated volume.
  if (!args.empty() && (args[0] == "scrub" || args[0] == "catalog")) {
    if (args.size() != 2 || args[1].empty() || args[1].size() > 255)
      throw std::invalid_argument("usage: protection " + args[0] + " VOLUME");
    for (const auto& [name, ifs] : coordinated) {
      if (name != args[1]) continue;
      if (args[0] == "catalog") return ifs->catalog_text();
      ifs->start_scrub();
      return "protection: scrub of " + name + " started (progress: nasd-admin protection " + name + ")\n";
    }
    throw std::invalid_argument("protection: no scale-out volume " + args[1] + " is coordinated here");
  }
  // `protection set VOLUME PATH POLICY`, `protection clear VOLUME PATH`, `protection get
  // VOLUME PATH`: a directory's own policy (cluster/scaleout/ifs_policy.h).
  if (!args.empty() && (args[0] == "set" || args[0] == "clear" || args[0] == "get")) {
    const size_t want = args[0] == "set" ? 4 : 3;
    if (args.size() != want || args[1].empty() || args[1].size() > 255 || args[2].empty() ||
        args[2].size() > 4096 || (want == 4 && (args[3].empty() || args[3].size() > 32)))
      throw std::invalid_argument("usage: protection " + args[0] + " VOLUME PATH" +
                                  (want == 4 ? " POLICY (+2d:1n, +3n, 6+2/2 ...)" : ""));
    std::optional<scaleout::ProtectionPolicy> policy;
    if (args[0] == "set") {
      scaleout::ProtectionPolicy p;
      std::string why;
      if (!scaleout::parse_protection_policy(args[3], &p, &why))
        throw std::invalid_argument("protection: " + args[3] + ": " + why);
      policy = p;
    }
    for (const auto& [name, ifs] : coordinated) {
      if (name != args[1]) continue;
      std::string out;
      const bool ok = args[0] == "get" ? ifs->directory_policy(args[2], &out)
                                       : ifs->set_directory_policy(args[2], policy, &out);
      if (!ok) throw std::invalid_argument("protection " + args[0] + ": " + out);
      return out;
    }
    throw std::invalid_argument("protection: no scale-out volume " + args[1] + " is coordinated here");
  }
  // Taken outside mu_: reading the catalog waits for the volume's own lock.
  constexpr size_t kMaxListedGroups = 1000;
  scaleout::ProtectionBoard board;
  for (const auto& [name, ifs] : coordinated) board.publish(name, ifs->group_status(kMaxListedGroups));
  return board.render(args);
}

std::vector<std::pair<std::string, scaleout::IfsHealth>> HostedVolumes::scaleout_health() const {
  std::vector<std::pair<std::string, std::shared_ptr<scaleout::IfsVolume>>> coordinated;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, h] : open_)
      if (h.ifs) coordinated.emplace_back(h.name, h.ifs);
  }
  std::vector<std::pair<std::string, scaleout::IfsHealth>> out;
  for (const auto& [name, ifs] : coordinated) out.emplace_back(name, ifs->health());  // outside mu_
  return out;
}

std::vector<HostedVolumes::Open> HostedVolumes::reports() const {
  std::lock_guard lock(mu_);
  std::vector<Open> out;
  for (const auto& [id, h] : open_)
    if (h.lfs) out.push_back({id, h.name, h.lfs->report()});
  return out;
}

}  // namespace nasd::cluster
