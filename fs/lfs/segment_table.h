// The segment usage table: live bytes and age per segment, which segments are free for the
// log, and the cost-benefit choice of what the cleaner reclaims next.
#pragma once

#include <cstdint>
#include <vector>

#include "fs/lfs/checkpoint.h"
#include "fs/lfs/layout.h"

namespace nasd::fs::lfs {

class SegmentTable {
 public:
  explicit SegmentTable(const Superblock& sb);

  // Restores usage (and pins) from a checkpoint; `in_use` are the log's current and next segments.
  void load(const std::vector<SegmentUsage>& usage, const std::vector<uint32_t>& in_use);
  const std::vector<SegmentUsage>& usage() const { return usage_; }
  void reset_usage();  // zero live bytes everywhere (before a full recount); keeps free flags
  void mark_in_use(uint32_t seg);

  void add_live(uint64_t addr, uint32_t bytes, int64_t now);
  void sub_live(uint64_t addr, uint32_t bytes);
  uint32_t live(uint32_t seg) const { return usage_[seg].live_bytes; }
  uint64_t total_live() const { return total_live_; }

  uint32_t free_count() const { return free_count_; }
  bool is_free(uint32_t seg) const { return free_[seg]; }
  // A free segment for the log (marked in use), or nsegments() when none is left.
  uint32_t take_free();
  // After a durable checkpoint: empty segments other than `keep` become free. Only then, because
  // the previous checkpoint may still reference their blocks.
  void release_empty(const std::vector<uint32_t>& keep);

  // Up to `max` segments worth cleaning, best first by (1-u)*age/(1+u); excludes `skip`.
  std::vector<uint32_t> pick_victims(int64_t now, size_t max, const std::vector<uint32_t>& skip,
                                     double max_utilization) const;

  // Snapshots. A segment holding any block a snapshot references is *pinned*: never free,
  // never a cleaning victim (the cleaner cannot move a snapshot's blocks, whose pointers are
  // frozen on disk), whatever its live bytes. `pinned` has one flag per segment; it replaces the
  // previous set (when a snapshot is created or deleted; load() restores it from the
  // checkpoint, which records it with the catalog). Segments no longer
  // pinned become free at the next release_empty(), i.e. after a durable checkpoint that no
  // longer lists the snapshot.
  void set_pinned(const std::vector<bool>& pinned);
  bool is_pinned(uint32_t seg) const { return pinned_[seg]; }
  uint32_t pinned_count() const { return pinned_count_; }
  // Space the snapshots hold beyond the live data: the whole of every pinned segment that is
  // not live, as the log cannot reuse it while the snapshot exists.
  uint64_t snapshot_held_bytes() const;

  uint32_t nsegments() const { return uint32_t(usage_.size()); }
  uint64_t segment_bytes() const { return seg_bytes_; }

 private:
  const Superblock sb_;
  uint64_t seg_bytes_;
  std::vector<SegmentUsage> usage_;
  std::vector<bool> free_;
  std::vector<bool> pinned_;
  uint32_t pinned_count_ = 0;
  uint64_t pinned_live_ = 0;  // live bytes inside pinned segments
  uint32_t free_count_ = 0;
  uint64_t total_live_ = 0;
  uint32_t rover_ = 0;  // next place to look for a free segment
};

}  // namespace nasd::fs::lfs
