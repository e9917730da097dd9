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

  // Restores usage from a checkpoint; `in_use` are the log's current and next segments.
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

  uint32_t nsegments() const { return uint32_t(usage_.size()); }
  uint64_t segment_bytes() const { return seg_bytes_; }

 private:
  const Superblock sb_;
  uint64_t seg_bytes_;
  std::vector<SegmentUsage> usage_;
  std::vector<bool> free_;
  uint32_t free_count_ = 0;
  uint64_t total_live_ = 0;
  uint32_t rover_ = 0;  // next place to look for a free segment
};

}  // namespace nasd::fs::lfs
