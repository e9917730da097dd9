// Statistics and the admin status text of the journal.
#include <cstdio>

#include "nvram/journal.h"

namespace nasd::nvram {

namespace {

std::string human_bytes(uint64_t n) {
  char buf[32];
  if (n >= (1ull << 30))
    std::snprintf(buf, sizeof buf, "%.1f GiB", n / double(1ull << 30));
  else if (n >= (1ull << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", n / double(1ull << 20));
  else if (n >= 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", n / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
  return buf;
}

}  // namespace

JournalStats Journal::stats() const {
  std::lock_guard lk(mu_);
  JournalStats s = counters_;
  s.log_bytes = region_->log_size();
  s.used_bytes = used_locked();
  s.live_records = live_records_;
  s.mirror_configured = mirror_ != nullptr;
  s.mirror_connected = mirror_connected_;
  s.degraded = degraded_ || persist_failed_;
  s.mirror_acked_pos = mirror_acked_;
  const uint64_t end = complete_end_locked();
  s.mirror_lag_bytes = mirror_ && end > mirror_acked_ ? end - mirror_acked_ : 0;
  return s;
}

std::string Journal::status() const {
  const JournalStats s = stats();
  uint64_t head, tail, carried;
  std::string stuck;
  {
    std::lock_guard lk(mu_);
    head = head_;
    tail = reserved_end_;
    carried = records_carried_;
    for (uint32_t v : stuck_) stuck += (stuck.empty() ? "" : ", ") + std::to_string(v);
  }
  char pct[16];
  std::snprintf(pct, sizeof pct, "%.1f%%", 100.0 * s.used_bytes / double(s.log_bytes));
  std::string out;
  out += "nvram: " + region_->path() + " (" + human_bytes(s.log_bytes) + " log, mode " +
         durability_mode_name(region_->mode()) + ", epoch " + std::to_string(epoch_) + ")" +
         (s.degraded ? " DEGRADED" : "") + "\n";
  out += "  fill: " + human_bytes(s.used_bytes) + " (" + pct + "), " +
         std::to_string(s.live_records) + " records, head " + std::to_string(head) + " tail " +
         std::to_string(tail) + "\n";
  char group[32];
  std::snprintf(group, sizeof group, "%.2f",
                s.commits ? double(s.records_committed) / double(s.commits) : 0.0);
  out += "  commits: " + std::to_string(s.commits) + " flushes for " +
         std::to_string(s.records_committed) + " records (avg group " + group + ", max " +
         std::to_string(s.max_group) + "), latency " + commit_latency_.summary() + "\n";
  out += "  stable calls answered without a waiting thread: " +
         std::to_string(s.loop_commit_answers) + " on the event loop, " +
         std::to_string(s.commit_callbacks) + " by the committer\n";
  out += "  write-behind: " + std::to_string(s.fs_flushes) + " fs flushes (latency " +
         fs_flush_latency_.summary() + "), " + std::to_string(s.trims) + " trims freed " +
         std::to_string(s.records_trimmed) + " records\n";
  out += "  back-pressure: " + std::to_string(s.space_waits) + " waits for space, " +
         std::to_string(s.space_timeouts) + " timed out (wait " + space_wait_latency_.summary() +
         ")\n";
  out += "  recovery: " + std::to_string(s.records_recovered) + " records found, " +
         std::to_string(s.records_replayed) + " replayed, " + std::to_string(s.replay_errors) +
         " replay errors\n";
  if (!stuck.empty() || carried > 0)
    out += "  stuck volumes (flush failing): " + (stuck.empty() ? std::string("none") : stuck) +
           "; " + std::to_string(carried) + " records carried forward past them\n";
  if (mirror_)
    out += "  mirror: " + mirror_->describe() + (s.mirror_connected ? " connected" : " NOT connected") +
           ", acked to " + std::to_string(s.mirror_acked_pos) + ", lag " +
           human_bytes(s.mirror_lag_bytes) + ", " + std::to_string(s.mirror_acks) + " acks, " +
           std::to_string(s.mirror_losses) + " losses, " + std::to_string(s.unmirrored_refusals) +
           " unmirrored commits refused\n";
  else
    out += "  mirror: none\n";
  return out;
}

}  // namespace nasd::nvram
