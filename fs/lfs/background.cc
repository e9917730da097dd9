#include "fs/lfs/background.h"

#include "fs/lfs/lfs_volume.h"

namespace nasd::fs::lfs {

namespace {
// Checkpoint once this much log was written since the last one, to bound roll-forward time.
constexpr uint64_t kCheckpointLogBytes = 256ull << 20;
// In the background, clean only segments that give back at least a fifth of their space; fuller
// ones are left for a writer that really needs the room.
constexpr double kBackgroundMaxUtilization = 0.8;
}  // namespace

BackgroundWorker::BackgroundWorker(LfsVolume* vol)
    : vol_(vol),
      last_checkpoint_(std::chrono::steady_clock::now()),
      worker_("fs", std::chrono::milliseconds(vol->opts_.flush_interval_ms), [this] { pass(); }) {
  worker_.start();
}

BackgroundWorker::~BackgroundWorker() { worker_.stop(); }

void BackgroundWorker::pass() {
  if (!vol_->opts_.snapshot_schedule.empty()) {
    // Cheap when nothing is due (a scan of the catalog); takes its own lock.
    std::string done = vol_->run_snapshot_schedule(now_time().sec);
    (void)done;
  }
  LfsVolume::Lock lk(vol_->mu_);
  Store& store = *vol_->store_;
  if (vol_->closed_ || store.failed()) return;
  if (store.needs_cleaning()) {
    store.clean(8, kBackgroundMaxUtilization);
    store.trim();
  }
  auto now = std::chrono::steady_clock::now();
  bool due = now - last_checkpoint_ >=
                 std::chrono::milliseconds(vol_->opts_.checkpoint_interval_ms) ||
             store.log_bytes_since_checkpoint() >= kCheckpointLogBytes;
  if (due && (store.has_dirty() || store.log_bytes_since_checkpoint() > 0)) {
    // Most of the dirty data goes out with readers let in; the checkpoint (exclusive) then
    // writes what came meanwhile, the inode map and the checkpoint block.
    uint64_t lsn = 0;
    store.trim();
    if (vol_->flush_letting_others_in(lk, &lsn) != Status::Ok) return;
    lk.lock();
    if (vol_->closed_ || store.failed()) return;
    store.checkpoint();
    last_checkpoint_ = now;
    store.trim();
    return;
  }
  // A held group (host full) is retried here too, so the volume recovers when space returns
  // even if nothing else is written meanwhile.
  if (!store.has_dirty() && !store.host_full()) return;
  // The device write runs with readers let in (LfsVolume::flush_letting_others_in).
  store.trim();
  uint64_t lsn = 0;
  if (vol_->flush_letting_others_in(lk, &lsn) != Status::Ok) return;
  store.sync_to(lsn);
}

}  // namespace nasd::fs::lfs
