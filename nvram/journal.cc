#include "nvram/journal.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <stdexcept>

#include "util/log.h"
#include "nvram/log_layout.h"
#include "nvram/tcp_mirror.h"
#include "util/contained_thread.h"
#include "util/secret_key.h"

namespace nasd::nvram {

namespace {

using Clock = std::chrono::steady_clock;

uint64_t micros_since(Clock::time_point t0) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count());
}

// Header fields other processes (a reader, the page cache after a crash) may look at are
// stored whole.
void store_u64(uint64_t& field, uint64_t value) {
  std::atomic_ref<uint64_t>(field).store(value, std::memory_order_release);
}

// The record at log position `pos`, which a walk of the complete log found there.
DecodeResult decode_at(const Region& region, uint64_t pos, RecordView* out) {
  const uint64_t avail = region.log_size() - pos % region.log_size();
  return decode_record(region.at(pos), avail, pos, out);
}

// Sequence order, each seq once: a record carried forward and not yet trimmed behind it is
// in the log twice, and is replayed once.
void order_by_seq(std::vector<RecordView>* recs) {
  std::stable_sort(recs->begin(), recs->end(),
                   [](const RecordView& a, const RecordView& b) { return a.seq < b.seq; });
  recs->erase(std::unique(recs->begin(), recs->end(),
                          [](const RecordView& a, const RecordView& b) { return a.seq == b.seq; }),
              recs->end());
}

}  // namespace

std::shared_ptr<Journal> Journal::open(const JournalOptions& options,
                                       std::unique_ptr<Mirror> mirror) {
  if (!mirror && !options.mirror.empty()) {
    TcpMirror::Options mo;
    mo.credentials = options.mirror_credentials;
    if (mo.credentials.key.empty() && !options.mirror_key_file.empty())
      mo.credentials.key = load_or_create_secret_key(options.mirror_key_file, "mirror key");
    mo.peer = options.mirror_peer;
    mo.source = options.mirror_source;
    mirror = std::make_unique<TcpMirror>(options.mirror, mo);
  }
  auto region = Region::open(options.path, options.size, options.mode);
  std::shared_ptr<Journal> j(new Journal(options, std::move(region), std::move(mirror)));
  j->recover_from_region();
  j->write_behind_.start();
  {
    std::lock_guard lk(j->mu_);
    j->committer_running_ = true;
  }
  j->committer_ = util::contained_thread("nvram", "committer", [raw = j.get()] { raw->run_committer(); });
  if (j->mirror_) {
    j->feeder_ = util::contained_thread("nvram", "mirror feeder", [raw = j.get()] { raw->feed_mirror(); });
    util::log("nvram").warn("mirror " + j->mirror_->describe() + " not connected yet: journal DEGRADED until it is");
    j->mirror_->start(j.get());
  }
  return j;
}

Journal::Journal(const JournalOptions& options, std::unique_ptr<Region> region,
                 std::unique_ptr<Mirror> mirror)
    : options_(options),
      region_(std::move(region)),
      mirror_(std::move(mirror)),
      epoch_(static_cast<uint32_t>(region_->header()->epoch)),
      write_behind_("nvram", options.flush_interval, [this] { flush_targets_and_trim(); }) {
  degraded_ = mirror_ != nullptr;
}

Journal::~Journal() {
  write_behind_.stop();
  if (mirror_) mirror_->stop();
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
    feed_cv_.notify_all();
    commit_cv_.notify_all();
    space_cv_.notify_all();
    committer_cv_.notify_all();
  }
  if (feeder_.joinable()) feeder_.join();
  // The committer answers its remaining waiters (commits need the region, still mapped).
  if (committer_.joinable()) committer_.join();
}

void Journal::recover_from_region() {
  RegionHeader* h = region_->header();
  head_ = h->head;
  ScanResult scan = scan_log(*region_, head_, head_ + region_->log_size());
  if (scan.stop == DecodeResult::OldVersion)
    throw std::runtime_error(
        "nvram region " + region_->path() + ": holds unreplayed records of an older record "
        "format at position " + std::to_string(scan.end) + " (this build writes version " +
        std::to_string(kRecordVersion) + "); start the nasd that wrote them once and stop it "
        "cleanly to drain the journal, then upgrade");
  if (scan.end < h->tail)
    util::log("nvram").error(region_->path() + ": committed records between positions " +
             std::to_string(scan.end) + " and " + std::to_string(h->tail) +
             " are damaged and cannot be replayed");
  reserved_end_ = committed_ = scan.end;
  store_u64(h->tail, scan.end);
  if (!region_->persist_header())
    throw std::runtime_error("nvram region " + region_->path() + ": msync failed");
  std::lock_guard lk(targets_mu_);
  for (const RecordView& r : scan.records) {
    recovered_[r.volume].push_back(r);
    uint64_t& m = max_recovered_seq_[r.volume];
    m = std::max(m, r.seq);
  }
  for (auto& [vol, recs] : recovered_) order_by_seq(&recs);
  live_records_ = scan.records.size();
  counters_.records_recovered = scan.records.size();
  if (!scan.records.empty())
    util::log("nvram").info(region_->path() + ": found " + std::to_string(scan.records.size()) +
             " records to recover (epoch " + std::to_string(epoch_) + ")");
}

void Journal::attach(uint32_t volume, std::shared_ptr<fs::JournalTarget> target) {
  {
    std::lock_guard lk(targets_mu_);
    targets_[volume] = std::move(target);
    retired_.erase(volume);
    warned_unattached_.erase(volume);
  }
  // Records of it that were carried forward while it was away: from now on the trim stops at
  // the originals too, which recovered() may hand to the opener.
  std::lock_guard lk(mu_);
  carried_volumes_.erase(volume);
  away_.erase(volume);
}

void Journal::detach(uint32_t volume, const fs::JournalTarget* target) {
  std::shared_ptr<fs::JournalTarget> dropped;  // released outside the lock
  std::unique_lock lk(targets_mu_);
  auto it = targets_.find(volume);
  if (it == targets_.end() || (target && it->second.get() != target)) return;
  dropped = std::move(it->second);
  targets_.erase(it);
  before_trim_.erase(volume);
  // What the file system made durable stays trimmable; anything newer is kept for whoever
  // opens the volume next (this node after a failback, or its replay after a crash).
  const uint64_t durable = dropped->durable_seq();
  retired_[volume] = durable;
  lk.unlock();
  keep_for_next_opener(volume, durable);
}

void Journal::keep_for_next_opener(uint32_t volume, uint64_t durable) {
  uint64_t max_seq = 0;
  bool newer = false;
  {
    std::lock_guard lk(mu_);
    walk_headers(*region_, head_, complete_end_locked(), [&](const RecordHeader& h) {
      if (h.volume == volume) {
        max_seq = std::max(max_seq, h.seq);
        newer |= h.seq > durable;
      }
      return true;
    });
    if (newer) away_.insert(volume);
  }
  std::lock_guard lk(targets_mu_);
  uint64_t& m = max_recovered_seq_[volume];
  m = std::max(m, max_seq);
  if (newer) kept_[volume] = durable;
}

void Journal::set_before_trim(uint32_t volume, std::function<void()> hook) {
  std::lock_guard lk(targets_mu_);
  before_trim_[volume] = std::move(hook);
}

std::vector<RecordView> Journal::recovered(uint32_t volume) const {
  std::vector<RecordView> recs;
  std::optional<uint64_t> kept_above;
  {
    std::lock_guard lk(targets_mu_);
    if (auto it = recovered_.find(volume); it != recovered_.end()) recs = it->second;
    if (auto it = kept_.find(volume); it != kept_.end()) kept_above = it->second;
  }
  if (!kept_above) return recs;
  {
    // Found where they are now: a carry may have copied them forward since the detach. The
    // volume is attached again (its opener asks), so the trim no longer passes them.
    std::lock_guard trim_lock(trim_mu_);
    std::lock_guard lk(mu_);
    walk_headers(*region_, head_, complete_end_locked(), [&](const RecordHeader& h) {
      if (h.volume != volume || h.seq <= *kept_above) return true;
      RecordView rec;
      if (decode_at(*region_, h.pos, &rec) == DecodeResult::Ok) recs.push_back(rec);
      return true;
    });
  }
  order_by_seq(&recs);
  return recs;
}

uint64_t Journal::max_recovered_seq(uint32_t volume) const {
  std::lock_guard lk(targets_mu_);
  auto it = max_recovered_seq_.find(volume);
  return it == max_recovered_seq_.end() ? 0 : it->second;
}

void Journal::release_recovered(uint32_t volume, uint64_t replayed, uint64_t errors) {
  {
    std::lock_guard lk(targets_mu_);
    recovered_.erase(volume);
    kept_.erase(volume);
  }
  std::lock_guard lk(mu_);
  counters_.records_replayed += replayed;
  counters_.replay_errors += errors;
}

uint64_t Journal::max_payload() const { return nvram::max_payload(region_->log_size()); }

uint64_t Journal::complete_end_locked() const {
  return copying_.first().value_or(reserved_end_);
}

bool Journal::over_threshold_locked() const {
  return used_locked() * 100 > region_->log_size() * options_.flush_threshold_pct;
}

fs::Status Journal::append(uint32_t volume, uint64_t seq, RecordType type,
                           std::span<const std::span<const uint8_t>> parts, uint64_t* ticket) {
  uint64_t payload = 0;
  for (auto p : parts) payload += p.size();
  if (payload > max_payload()) return fs::Status::Io;
  const uint64_t footprint = record_footprint(payload);
  const uint64_t log_size = region_->log_size();

  std::unique_lock lk(mu_);
  const auto wait_start = Clock::now();
  const auto deadline = wait_start + options_.space_wait;
  bool waited = false;
  uint64_t pos;
  for (;;) {
    if (stopping_) return fs::Status::Jukebox;
    pos = place_record(reserved_end_, footprint, log_size);
    if (pos + footprint - head_ <= log_size - headroom_locked(volume)) break;
    if (!waited) {
      waited = true;
      ++counters_.space_waits;
    }
    // Full: write-behind flushes the file systems and trims; nothing is dropped.
    write_behind_.nudge();
    if (space_cv_.wait_until(lk, deadline) == std::cv_status::timeout &&
        place_record(reserved_end_, footprint, log_size) + footprint - head_ >
            log_size - headroom_locked(volume)) {
      ++counters_.space_timeouts;
      space_wait_latency_.add(micros_since(wait_start));
      return fs::Status::Jukebox;
    }
  }
  if (waited) space_wait_latency_.add(micros_since(wait_start));
  (void)try_reserve_locked(footprint, &pos);  // fits: checked above
  ++counters_.appends;
  const bool nudge = over_threshold_locked();
  lk.unlock();

  if (nudge) write_behind_.nudge();
  RecordKey key;
  key.pos = pos;
  key.seq = seq;
  key.volume = volume;
  key.epoch = epoch_;
  key.type = type;
  encode_record(region_->at(pos), key, parts);

  lk.lock();
  finish_copy_locked(pos);
  *ticket = pos + footprint;
  return fs::Status::Ok;
}

bool Journal::has_room_now(uint32_t volume, uint64_t payload) const {
  if (payload > max_payload()) return false;
  const uint64_t footprint = record_footprint(payload);
  const uint64_t log_size = region_->log_size();
  std::lock_guard lk(mu_);
  if (stopping_) return false;
  const uint64_t pos = place_record(reserved_end_, footprint, log_size);
  return pos + footprint - head_ + log_size / 8 <= log_size - headroom_locked(volume);
}

bool Journal::wait_for_room(uint32_t volume, uint64_t payload,
                            std::chrono::steady_clock::time_point deadline) {
  if (payload > max_payload()) return false;
  const uint64_t footprint = record_footprint(payload);
  const uint64_t log_size = region_->log_size();
  std::unique_lock lk(mu_);
  const auto wait_start = Clock::now();
  deadline = std::min(deadline, wait_start + options_.space_wait);
  // The same test as append()'s.
  auto room = [&] {
    return place_record(reserved_end_, footprint, log_size) + footprint - head_ <=
           log_size - headroom_locked(volume);
  };
  bool waited = false;
  for (;;) {
    if (stopping_) return false;
    if (room()) break;
    if (!waited) {
      waited = true;
      ++counters_.space_waits;
    }
    write_behind_.nudge();
    if (space_cv_.wait_until(lk, deadline) == std::cv_status::timeout && !room()) {
      ++counters_.space_timeouts;
      space_wait_latency_.add(micros_since(wait_start));
      return false;
    }
  }
  if (waited) space_wait_latency_.add(micros_since(wait_start));
  return true;
}

uint64_t Journal::headroom_locked(uint32_t volume) const {
  // While a volume is stuck, or away with records kept for it, the others leave a quarter of
  // the log free, so that those records can always be carried forward; the stuck volume
  // itself is bounded by accepts_mutations().
  if ((stuck_.empty() && away_.empty()) || stuck_.count(volume) || away_.count(volume)) return 0;
  return region_->log_size() / 4;
}

bool Journal::try_reserve_locked(uint64_t footprint, uint64_t* out) {
  const uint64_t log_size = region_->log_size();
  const uint64_t pos = place_record(reserved_end_, footprint, log_size);
  if (pos + footprint - head_ > log_size) return false;
  if (pos != reserved_end_) write_skip(*region_, reserved_end_, pos, epoch_);
  copying_.add(pos);
  reserved_end_ = pos + footprint;
  ++live_records_;
  *out = pos;
  return true;
}

void Journal::finish_copy_locked(uint64_t pos) {
  if (copying_.copied(pos)) {
    // The complete prefix grew: a commit leader or the feeder may now go further.
    commit_cv_.notify_all();
    feed_cv_.notify_one();
  }
}

bool Journal::accepts_mutations(uint32_t volume) const {
  if (!accepts_mutations()) return false;
  std::lock_guard lk(mu_);
  return !stuck_.count(volume) || used_locked() * 2 < region_->log_size();
}

void Journal::carry_stuck_records() {
  std::map<uint32_t, uint64_t> durable;
  {
    std::lock_guard lk(targets_mu_);
    durable = retired_;
    for (const auto& [vol, target] : targets_) durable[vol] = target->durable_seq();
  }
  std::lock_guard trim_lock(trim_mu_);
  std::unique_lock lk(mu_);
  std::set<uint32_t> stuck = stuck_;
  stuck.insert(away_.begin(), away_.end());
  if (stuck.empty() || !over_threshold_locked()) return;
  // The records the head cannot pass only because they wait for a stuck volume, up to the
  // first one that waits for a healthy volume (trimming stops there anyway).
  std::vector<uint64_t> carry;
  const uint64_t walked = walk_headers(*region_, head_, std::min(committed_, feed_pin_),
                                       [&](const RecordHeader& h) {
    auto it = durable.find(h.volume);
    if (it != durable.end() && h.seq <= it->second) return true;
    if (!stuck.count(h.volume)) return false;
    carry.push_back(h.pos);
    return true;
  });
  uint64_t last_ticket = 0, carried = 0;
  for (uint64_t from : carry) {
    // The original stays in place (below the head's limit, so nobody reuses it) until the trim
    // after this copy; copying from it with mu_ released is safe under trim_mu_.
    RecordView rec;
    if (decode_at(*region_, from, &rec) != DecodeResult::Ok) break;
    const uint64_t footprint = record_footprint(rec.payload.size());
    uint64_t pos;
    if (!try_reserve_locked(footprint, &pos)) break;  // no room: the quota stops this volume
    lk.unlock();
    RecordKey key;
    key.pos = pos;
    key.seq = rec.seq;
    key.volume = rec.volume;
    key.epoch = epoch_;
    key.type = rec.type;
    const std::array<std::span<const uint8_t>, 1> parts{rec.payload};
    encode_record(region_->at(pos), key, parts);
    lk.lock();
    finish_copy_locked(pos);
    last_ticket = pos + footprint;
    ++carried;
  }
  records_carried_ += carried;
  carried_end_ = carried == carry.size() ? walked : carry[carried];
  carried_volumes_ = stuck;
  lk.unlock();
  // The copies must be committed (and mirrored) before a trim lets the originals go.
  if (last_ticket != 0) (void)wait_committed(last_ticket);
}

uint64_t Journal::count_records(uint64_t from, uint64_t to) const {
  uint64_t n = 0;
  walk_headers(*region_, from, to, [&n](const RecordHeader&) {
    ++n;
    return true;
  });
  return n;
}

void Journal::commit_locked(std::unique_lock<std::mutex>& lk) {
  commit_running_ = true;
  const uint64_t from = committed_, to = complete_end_locked();
  lk.unlock();
  const auto t0 = Clock::now();
  // One sync per group: recovery trusts each record's CRC, position and epoch, not the tail,
  // so the commit marker needs no sync of its own (trims sync the header page). It is written
  // after the data, so a synced marker never covers unsynced records.
  const bool ok = region_->persist_log(from, to);
  store_u64(region_->header()->tail, to);
  const uint64_t latency = micros_since(t0);
  const uint64_t records = count_records(from, to);
  if (!ok) util::log("nvram").error("msync of " + region_->path() + " failed; commits are not host-durable");
  lk.lock();
  committed_ = to;
  commit_running_ = false;
  ++counters_.commits;
  counters_.records_committed += records;
  counters_.max_group = std::max(counters_.max_group, records);
  if (!ok) persist_failed_ = true;
  commit_latency_.add(latency);
  commit_cv_.notify_all();
}

void Journal::wait_local_commit_locked(std::unique_lock<std::mutex>& lk, uint64_t ticket) {
  while (committed_ < ticket) {
    // Leader/follower: whoever finds no commit running commits the whole complete prefix,
    // which covers every waiter whose record is in by then.
    if (!commit_running_ && complete_end_locked() >= ticket)
      commit_locked(lk);
    else
      commit_cv_.wait(lk);
  }
}

fs::Status Journal::wait_committed(uint64_t ticket) {
  if (ticket == 0) return fs::Status::Ok;
  std::unique_lock lk(mu_);
  wait_local_commit_locked(lk, ticket);
  if (persist_failed_) return fs::Status::Io;  // host-mode durability cannot be promised
  return wait_mirror(lk, ticket);
}

fs::Status Journal::committed_status_locked(uint64_t ticket, fs::Status mirror_lost) const {
  if (persist_failed_) return fs::Status::Io;  // host-mode durability cannot be promised
  if (!mirror_ || mirror_acked_ >= ticket) return fs::Status::Ok;
  return mirror_lost;
}

bool Journal::commits_in_memory() const {
  return !mirror_ && region_->mode() != DurabilityMode::Host;
}

std::optional<fs::Status> Journal::try_committed(uint64_t ticket) {
  if (ticket == 0) return fs::Status::Ok;
  std::unique_lock lk(mu_);
  if (committed_ < ticket) {
    // Committing here is a store of the commit marker (persist_log is a no-op outside host
    // mode): cheaper than handing the call to a thread that would do the same.
    if (!commits_in_memory() || commit_running_ || complete_end_locked() < ticket)
      return std::nullopt;
    commit_locked(lk);
  }
  if (!persist_failed_ && mirror_ && mirror_acked_ < ticket) return std::nullopt;
  ++counters_.loop_commit_answers;
  return committed_status_locked(ticket, fs::Status::Ok);
}

void Journal::when_committed(uint64_t ticket, CommitCallback done) {
  {
    std::lock_guard lk(mu_);
    if (committer_running_) {
      async_waiters_.emplace(ticket, std::move(done));
      committer_cv_.notify_one();
      return;
    }
  }
  // The committer has stopped (the journal is closing): answer in place.
  done(wait_committed(ticket));
}

void Journal::run_committer() {
  std::unique_lock lk(mu_);
  for (;;) {
    if (async_waiters_.empty()) {
      if (stopping_) break;
      committer_cv_.wait(lk);
      continue;
    }
    // Lead one group commit: it covers every record complete by now, which includes the
    // oldest waiter's (its record was appended before it registered).
    wait_local_commit_locked(lk, async_waiters_.begin()->first);
    auto end = async_waiters_.upper_bound(committed_);
    if (end == async_waiters_.begin()) continue;  // cannot happen: the first is committed
    // The group: every waiter whose record that commit covered. With a mirror, also
    // acknowledged by the partner, which acknowledges prefixes too: waiting for the group's
    // last ticket covers the group, and only the group (later records may not be mirrored yet).
    uint64_t limit = committed_;
    fs::Status lost = fs::Status::Ok;
    if (mirror_ && !persist_failed_) {
      limit = std::prev(end)->first;
      lost = wait_mirror(lk, limit);
    }
    // wait_mirror may have let the lock go; waiters that came meanwhile with a ticket in the
    // group are answered with it (committed_status_locked looks at each one's own ticket).
    end = async_waiters_.upper_bound(limit);
    std::vector<std::pair<fs::Status, CommitCallback>> answers;
    for (auto it = async_waiters_.begin(); it != end; ++it)
      answers.emplace_back(committed_status_locked(it->first, lost), std::move(it->second));
    async_waiters_.erase(async_waiters_.begin(), end);
    counters_.commit_callbacks += answers.size();
    lk.unlock();
    // The callbacks resume their calls (often encoding and posting the reply right here).
    for (auto& [st, done] : answers) {
      try {
        done(st);
      } catch (const std::exception& e) {
        // One caller's failure must not strand the others (nor end the process).
        util::log("nvram").error(std::string("commit callback failed: ") + e.what());
      }
    }
    lk.lock();
  }
  committer_running_ = false;
}

void Journal::commit_complete() {
  std::unique_lock lk(mu_);
  wait_local_commit_locked(lk, complete_end_locked());
}

void Journal::trim() {
  std::map<uint32_t, uint64_t> durable;
  {
    std::lock_guard lk(targets_mu_);
    durable = retired_;
    for (const auto& [vol, target] : targets_) durable[vol] = target->durable_seq();
  }
  std::lock_guard trim_lock(trim_mu_);

  std::unique_lock lk(mu_);
  const uint64_t limit = std::min(committed_, feed_pin_);
  uint64_t trimmed = 0;
  std::optional<uint32_t> blocked_by;
  const uint64_t new_head =
      walk_headers(*region_, head_, limit, [&](const RecordHeader& h) {
        if (h.pos < carried_end_ && carried_volumes_.count(h.volume)) {
          ++trimmed;  // a copy further on stands for it
          return true;
        }
        auto it = durable.find(h.volume);
        if (it == durable.end()) {
          blocked_by = h.volume;
          return false;
        }
        if (h.seq > it->second) return false;
        ++trimmed;
        return true;
      });
  const uint64_t old_head = head_;
  const bool log_filling = over_threshold_locked();
  lk.unlock();

  // Worth a warning only once it matters: before every volume attached (startup), it is normal.
  if (blocked_by && log_filling) {
    std::lock_guard tl(targets_mu_);
    if (warned_unattached_.insert(*blocked_by).second)
      util::log("nvram").warn("records of volume " + std::to_string(*blocked_by) +
               ", which no file system is attached for, are kept and hold back trimming");
  }
  if (new_head == old_head) return;
  // The new head must be durable before its space is reused, or a restart would scan from the
  // old head into overwritten records. For the same reason the mirror hears of the trim before
  // any record that reuses the space can be fed to it.
  store_u64(region_->header()->head, new_head);
  if (!region_->persist_header()) util::log("nvram").error("msync of " + region_->path() + " failed");
  if (mirror_) mirror_->trim(new_head);

  lk.lock();
  head_ = new_head;
  live_records_ -= trimmed;
  ++counters_.trims;
  counters_.records_trimmed += trimmed;
  space_cv_.notify_all();
  feed_cv_.notify_one();
}

void Journal::flush_targets_and_trim() {
  std::lock_guard fl(flush_mu_);
  {
    std::lock_guard lk(mu_);
    if (live_records_ == 0) return;
  }
  // Records nobody waited for (UNSTABLE writes) are committed here, so that they can be
  // trimmed once the fs has them (trimming never passes the commit marker).
  commit_complete();
  std::vector<std::pair<uint32_t, std::shared_ptr<fs::JournalTarget>>> targets;
  std::map<uint32_t, std::function<void()>> before_trim;
  {
    std::lock_guard lk(targets_mu_);
    targets.assign(targets_.begin(), targets_.end());
    before_trim = before_trim_;
  }
  for (auto& [vol, target] : targets) {
    const auto t0 = Clock::now();
    uint64_t durable = 0;
    fs::Status st = target->flush(&durable);
    fs_flush_latency_.add(micros_since(t0));
    std::lock_guard lk(mu_);
    ++counters_.fs_flushes;
    // Said once when a volume gets stuck and once when it recovers, not at every pass.
    if (st != fs::Status::Ok && stuck_.insert(vol).second)
      util::log("nvram").error("flush of volume " + std::to_string(vol) + " failed: " +
                               fs::status_name(st) +
                               "; its records are kept (carried forward) and no longer hold back the others");
    if (st == fs::Status::Ok && stuck_.erase(vol))
      util::log("nvram").info("volume " + std::to_string(vol) + " flushes again");
  }
  // Before the trim below may drop records whose state must outlive them (hooks run without
  // the journal's locks).
  for (auto& [vol, hook] : before_trim) hook();
  // Each round carries what fits and trims past it, which frees room for the next.
  for (int round = 0; round < 8; ++round) {
    uint64_t carried_before, head_before;
    {
      std::lock_guard lk(mu_);
      carried_before = records_carried_;
      head_before = head_;
    }
    carry_stuck_records();
    trim();
    std::lock_guard lk(mu_);
    if (records_carried_ == carried_before || head_ == head_before) break;
  }
}

void Journal::shutdown() {
  write_behind_.stop();
  flush_targets_and_trim();
  if (mirror_) mirror_->stop();
  std::lock_guard lk(mu_);
  stopping_ = true;
  feed_cv_.notify_all();
  commit_cv_.notify_all();
  space_cv_.notify_all();
  committer_cv_.notify_all();
}

}  // namespace nasd::nvram
