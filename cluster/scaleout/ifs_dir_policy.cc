// IfsVolume's per-directory protection policies (ifs_policy.h): set, clear and show them by
// path, for `nasd-admin protection set|clear|get VOLUME PATH`.
#include <sstream>

#include "cluster/scaleout/ifs_policy.h"
#include "cluster/scaleout/ifs_volume.h"
#include "util/log.h"

namespace nasd::scaleout {

bool IfsVolume::set_directory_policy(std::string_view path, std::optional<ProtectionPolicy> policy,
                                     std::string* message) {
  if (closed_ || abandoned_) {
    *message = "the volume is closing";
    return false;
  }
  if (policy) {
    // Honourable by the members when all are up: a node down now is not a reason to refuse
    // (its groups are re-protected meanwhile, as for the volume's default).
    Topology members = cluster_->topology();
    for (NodeState& n : members.nodes) {
      n.alive = true;
      for (DriveState& d : n.drives) d.healthy = true;
    }
    const std::string why = check_honourable(*policy, members);
    if (!why.empty()) {
      *message = why;
      return false;
    }
  }
  std::string shown;
  {
    std::lock_guard lock(mu_);
    uint64_t ino = 0;
    if (!resolve_path(live_, path, &ino, message)) return false;
    IfsInode& n = live_.inodes.at(ino);
    if (n.attr.type != fs::FileType::Dir) {
      *message = std::string(path) + " is not a directory (a file takes its directory's policy)";
      return false;
    }
    n.policy = policy;
    meta_changed_ = true;  // the next checkpoint (below) holds it
    shown = path_of(live_, ino);
  }
  // Durable before it is acknowledged: the checkpoint is what the next coordinator opens.
  uint64_t durable = 0;
  if (flush(&durable) != fs::Status::Ok) {
    *message = "policy of " + shown + " changed in memory, but its checkpoint did not land (the "
               "next flush writes it; check again with protection get)";
    return false;
  }
  {
    std::lock_guard lock(stop_mu_);
    restripe_requested_ = true;  // the files already under it are re-laid (JobKind::Restripe)
  }
  stop_cv_.notify_all();
  *message = policy ? "protection of " + shown + " set to " + policy->to_string()
                    : "protection of " + shown + " cleared (inherited again)";
  util::log("ifs").info("volume " + options_.name + ": " + *message);
  *message += "; files under it are restriped in the background (progress: protection " +
              options_.name + ")\n";
  return true;
}

bool IfsVolume::directory_policy(std::string_view path, std::string* text) {
  const Topology t = cluster_->topology();
  std::vector<GroupRecord> records;
  JobConfig config;
  std::ostringstream o;
  {
    std::lock_guard lock(mu_);
    uint64_t ino = 0;
    if (!resolve_path(live_, path, &ino, text)) return false;
    const EffectivePolicy e = effective_policy(live_, ino, options_.policy);
    const IfsInode& n = live_.inodes.at(ino);
    o << path_of(live_, ino) << ": " << e.policy.to_string() << " (";
    switch (e.source) {
      case PolicySource::Directory: o << policy_source_name(e.source); break;
      case PolicySource::Ancestor: o << policy_source_name(e.source) << " " << path_of(live_, e.from); break;
      case PolicySource::Volume: o << policy_source_name(e.source); break;
    }
    o << ")";
    if (n.attr.type == fs::FileType::Reg) {
      o << "; groups:";
      for (const auto& [off, r] : n.extents)
        o << " " << r.shape.data << "+" << r.shape.parity << "/" << r.shape.per_node;
      if (n.extents.empty()) o << " none yet";
    }
    o << "\n";
    records = catalog_locked();
    config = job_config_locked();
  }
  ProtectionJob judge(config, 0, t);
  judge.load(records);
  const JobProgress p = judge.progress();
  o << "volume " << options_.name << ": " << p.groups_misshaped << " of " << p.groups
    << " groups wait for their restripe\n";
  *text = o.str();
  return true;
}

}  // namespace nasd::scaleout
