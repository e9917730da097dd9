// The journal's side of mirroring: feeding records to the partner in log order, and waiting
// for its acks before a commit counts (see journal.h).
#include <algorithm>

#include "nvram/journal.h"
#include "util/log.h"
#include "nvram/log_layout.h"

namespace nasd::nvram {

namespace {

using Clock = std::chrono::steady_clock;

// How much the feeder hands the mirror per round; bounds how long a trim can be held back.
constexpr uint64_t kFeedBatchBytes = 1 << 20;

}  // namespace

void Journal::set_unmirrored_gate(std::shared_ptr<UnmirroredGate> gate) {
  std::lock_guard lk(mu_);
  gate_ = std::move(gate);
  // A mirror that caught up before the gate came (a node's start) may send no ack for a while.
  if (gate_ && mirror_connected_) gate_->mirror_holds(mirror_acked_);
}

uint64_t Journal::log_end() const {
  std::lock_guard lk(mu_);
  return complete_end_locked();
}

fs::Status Journal::wait_mirror(std::unique_lock<std::mutex>& lk, uint64_t ticket) {
  if (!mirror_) return fs::Status::Ok;
  // What a record the mirror lacks gets: JUKEBOX under the Fail policy; under Continue, Ok
  // once the gate (if any) recorded that the mirror is stale, else JUKEBOX too.
  const auto unmirrored = [&]() {
    if (options_.mirror_policy == MirrorPolicy::Fail) return fs::Status::Jukebox;
    if (!gate_ || mirror_acked_ >= ticket) return fs::Status::Ok;
    std::shared_ptr<UnmirroredGate> gate = gate_;
    lk.unlock();
    const bool admitted = gate->admit_unmirrored(ticket);
    lk.lock();
    if (!admitted) ++counters_.unmirrored_refusals;
    return admitted || mirror_acked_ >= ticket ? fs::Status::Ok : fs::Status::Jukebox;
  };
  const auto deadline = Clock::now() + options_.mirror_timeout;
  while (mirror_acked_ < ticket) {
    if (!mirror_connected_ || stopping_) return unmirrored();
    if (commit_cv_.wait_until(lk, deadline) == std::cv_status::timeout &&
        mirror_acked_ < ticket && mirror_connected_) {
      mirror_connected_ = false;
      declare_degraded_locked("no ack within " + std::to_string(options_.mirror_timeout.count()) +
                              " ms");
      lk.unlock();
      mirror_->reset("ack timeout");
      lk.lock();
      return unmirrored();
    }
  }
  return fs::Status::Ok;
}

bool Journal::accepts_mutations() const {
  if (!mirror_ || options_.mirror_policy == MirrorPolicy::Continue) return true;
  std::lock_guard lk(mu_);
  return mirror_connected_;
}

void Journal::declare_degraded_locked(const std::string& why) {
  ++counters_.mirror_losses;
  if (degraded_) return;
  degraded_ = true;
  util::log("nvram").warn("mirror " + mirror_->describe() + " lost (" + why + "): journal DEGRADED, " +
           (options_.mirror_policy == MirrorPolicy::Fail
                ? "policy fail: mutations fail with NFS3ERR_JUKEBOX until the mirror is back"
                : "policy continue: mutations are committed to local NVRAM only"));
}

MirrorHello Journal::mirror_hello() {
  std::lock_guard lk(mu_);
  const RegionHeader* h = region_->header();
  return MirrorHello{h->uuid, h->log_size, head_, complete_end_locked(), h->epoch};
}

void Journal::mirror_connected(uint64_t resume_pos) {
  std::lock_guard lk(mu_);
  mirror_connected_ = true;
  mirror_sent_ = resume_pos;  // where the partner's log ends; feed_mirror() catches up the head
  mirror_acked_ = std::max(mirror_acked_, resume_pos);
  if (gate_) gate_->mirror_holds(mirror_acked_);
  util::log("nvram").info("mirror " + mirror_->describe() + " connected, partner holds records up to " +
           std::to_string(resume_pos) + (degraded_ ? ": journal no longer degraded" : ""));
  degraded_ = false;
  feed_cv_.notify_one();
  commit_cv_.notify_all();
}

void Journal::mirror_acked(uint64_t end_pos) {
  std::lock_guard lk(mu_);
  if (end_pos > mirror_acked_) mirror_acked_ = end_pos;
  if (gate_) gate_->mirror_holds(mirror_acked_);
  ++counters_.mirror_acks;
  commit_cv_.notify_all();
}

void Journal::mirror_lost(const std::string& why) {
  std::lock_guard lk(mu_);
  const bool was_connected = mirror_connected_;
  mirror_connected_ = false;
  if (was_connected || !degraded_) declare_degraded_locked(why);
  commit_cv_.notify_all();
}

void Journal::feed_mirror() {
  std::unique_lock lk(mu_);
  while (!stopping_) {
    const uint64_t from = std::max(mirror_sent_, head_);
    const uint64_t end = complete_end_locked();
    if (!mirror_connected_ || from >= end) {
      feed_cv_.wait(lk);
      continue;
    }
    const uint64_t limit = std::min(end, from + kFeedBatchBytes);
    // Records go on where the partner's log ends, unless trims moved the head past that: then
    // the partner may never have heard of them (a trim made while the link was being set up is
    // lost with it), and must, or records at the head would look to it like a gap.
    const bool announce_head = from > mirror_sent_;
    feed_pin_ = from;
    lk.unlock();
    if (announce_head) mirror_->trim(from);
    ScanResult batch = scan_log(*region_, from, limit);
    const bool sent = batch.stop == DecodeResult::Ok && mirror_->replicate(batch.records);
    if (batch.stop != DecodeResult::Ok)
      util::log("nvram").error("feeding the mirror: complete record at position " +
               std::to_string(batch.end) + " does not validate");
    lk.lock();
    feed_pin_ = UINT64_MAX;
    if (sent) {
      mirror_sent_ = std::max(mirror_sent_, batch.end);
    } else {
      // Not connected (or broken): wait for the next mirror_connected() to set the resume point.
      feed_cv_.wait_for(lk, std::chrono::milliseconds(100));
    }
  }
}

}  // namespace nasd::nvram
