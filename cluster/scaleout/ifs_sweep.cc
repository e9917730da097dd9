// IfsVolume's orphan sweep: the driver of OrphanSweep (orphan_sweep.h). The machine decides;
// this takes the fence and the referenced units under the volume's lock after a checkpoint,
// lists every usable drive through the unit service a page at a time, and deletes what the
// machine calls orphans. See orphan_sweep.h for why that order is safe.
#include "cluster/scaleout/ifs_volume.h"
#include "util/log.h"

namespace nasd::scaleout {

static_assert(kMetadataFile == 0, "orphan_sweep.cc never sweeps file 0, the metadata image");

void IfsVolume::sweep_snapshot(SweepFence* fence, std::vector<UnitRef>* referenced) {
  std::lock_guard lock(mu_);
  fence->client_epoch = live_.epoch;
  fence->client_floor = flush_floor_ ? *flush_floor_ : live_.next_version;
  fence->job_epoch = live_.job_epoch;
  for (const auto& [ino, n] : live_.inodes)
    for (const auto& [off, r] : n.extents)
      for (size_t i = 0; i < r.places.size(); i++) referenced->push_back(UnitRef{r.places[i], r.key(int(i))});
  for (const Garbage& g : garbage_) referenced->insert(referenced->end(), g.units.begin(), g.units.end());
}

SweepProgress IfsVolume::sweep_now() {
  std::lock_guard pass_lock(pass_mu_);  // no protection pass (and its versions) meanwhile
  auto last = [&] {
    std::lock_guard lock(status_mu_);
    return sweep_progress_;
  };
  if (closed_ || abandoned_) return last();
  // A checkpoint of the live catalog first: afterwards every unit the newest checkpoint names
  // is in the catalog or in the pending garbage, both of which the snapshot below keeps.
  uint64_t durable = 0;
  if (flush(&durable) != fs::Status::Ok) {
    util::log("ifs").warn("volume " + options_.name + ": orphan sweep skipped: no checkpoint");
    return last();
  }
  SweepFence fence;
  std::vector<UnitRef> referenced;
  sweep_snapshot(&fence, &referenced);
  OrphanSweep sweep(fence, referenced, cluster_->topology());
  referenced.clear();
  const SweepProgress before = last();
  auto publish = [&] {
    SweepProgress p = sweep.progress();
    p.sweeps += before.sweeps;
    p.units_dropped_total = before.units_dropped_total + p.units_dropped;
    std::lock_guard lock(status_mu_);
    sweep_progress_ = p;
    return p;
  };
  publish();
  // Bounded: a page per drive per round, and a drive's pages are finite; the cap only guards
  // against a listing that never ends (a drive filling faster than it is listed).
  std::vector<UnitKey> keys;
  // The checkpoint above holds this coordinator's epoch and the last pass's job epoch, so a
  // successor's versions are all above the fence; still, once the volume is given up (the
  // lease lost) nothing more is deleted: a successor's catalog is not the one judged here.
  for (size_t round = 0; !sweep.done() && round < (size_t(1) << 20) && !abandoned_ && !closed_; round++) {
    for (const SweepAction& a : sweep.take_actions()) {
      if (abandoned_ || closed_) break;
      if (a.kind == SweepAction::Kind::List) {
        bool more = false;
        const UnitStatus st = cluster_->units()->list(a.place, a.from, kMaxListKeys, &keys, &more);
        sweep.listed(a.place, st, keys, more);
      } else {
        for (const UnitKey& k : a.keys) cluster_->units()->remove(a.place, k);
      }
    }
    publish();
    std::lock_guard lock(stop_mu_);
    if (stopping_) break;
  }
  SweepProgress p = publish();
  if (p.running) {  // stopped half-way: the next sweep starts again
    std::lock_guard lock(status_mu_);
    p.running = sweep_progress_.running = false;
  }
  util::log("ifs").info("volume " + options_.name + ": " + p.text());
  return p;
}

}  // namespace nasd::scaleout
