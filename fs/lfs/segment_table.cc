#include "fs/lfs/segment_table.h"

#include <algorithm>

namespace nasd::fs::lfs {

SegmentTable::SegmentTable(const Superblock& sb)
    : sb_(sb), seg_bytes_(sb.segment_bytes()), usage_(sb.nsegments), free_(sb.nsegments, true),
      pinned_(sb.nsegments, false), free_count_(sb.nsegments) {}

void SegmentTable::load(const std::vector<SegmentUsage>& usage,
                        const std::vector<uint32_t>& in_use) {
  usage_ = usage;
  usage_.resize(sb_.nsegments);
  total_live_ = 0;
  free_count_ = 0;
  for (uint32_t s = 0; s < usage_.size(); s++) {
    pinned_[s] = usage_[s].pinned;
    total_live_ += usage_[s].live_bytes;
    bool in = std::find(in_use.begin(), in_use.end(), s) != in_use.end();
    free_[s] = usage_[s].live_bytes == 0 && !in && !pinned_[s];
    free_count_ += free_[s];
  }
  set_pinned(std::vector<bool>(pinned_));  // recounts pinned_live_
}

void SegmentTable::set_pinned(const std::vector<bool>& pinned) {
  pinned_count_ = 0;
  pinned_live_ = 0;
  for (uint32_t s = 0; s < usage_.size(); s++) {
    pinned_[s] = s < pinned.size() && pinned[s];
    if (!pinned_[s]) continue;
    pinned_count_++;
    pinned_live_ += usage_[s].live_bytes;
    if (free_[s]) {
      free_[s] = false;
      free_count_--;
    }
  }
}

uint64_t SegmentTable::snapshot_held_bytes() const {
  uint64_t all = uint64_t(pinned_count_) * seg_bytes_;
  return all > pinned_live_ ? all - pinned_live_ : 0;
}

void SegmentTable::reset_usage() {
  for (auto& u : usage_) u.live_bytes = 0;
  total_live_ = 0;
  pinned_live_ = 0;
}

void SegmentTable::add_live(uint64_t addr, uint32_t bytes, int64_t now) {
  uint32_t s = sb_.segment_of(addr);
  if (s >= usage_.size()) return;
  usage_[s].live_bytes += bytes;
  usage_[s].mtime = std::max(usage_[s].mtime, now);
  total_live_ += bytes;
  if (pinned_[s]) pinned_live_ += bytes;
}

void SegmentTable::sub_live(uint64_t addr, uint32_t bytes) {
  uint32_t s = sb_.segment_of(addr);
  if (s >= usage_.size()) return;
  uint32_t d = std::min(bytes, usage_[s].live_bytes);  // never wraps, even on a bad count
  usage_[s].live_bytes -= d;
  total_live_ -= d;
  if (pinned_[s]) pinned_live_ -= std::min<uint64_t>(d, pinned_live_);
}

void SegmentTable::mark_in_use(uint32_t seg) {
  if (seg < free_.size() && free_[seg]) {
    free_[seg] = false;
    free_count_--;
  }
}

uint32_t SegmentTable::take_free() {
  uint32_t n = nsegments();
  for (uint32_t i = 0; i < n; i++) {
    uint32_t s = (rover_ + i) % n;
    if (free_[s]) {
      free_[s] = false;
      free_count_--;
      rover_ = (s + 1) % n;
      return s;
    }
  }
  return n;
}

void SegmentTable::release_empty(const std::vector<uint32_t>& keep) {
  for (uint32_t s = 0; s < usage_.size(); s++) {
    if (free_[s] || usage_[s].live_bytes != 0 || pinned_[s]) continue;
    if (std::find(keep.begin(), keep.end(), s) != keep.end()) continue;
    free_[s] = true;
    free_count_++;
  }
}

std::vector<uint32_t> SegmentTable::pick_victims(int64_t now, size_t max,
                                                 const std::vector<uint32_t>& skip,
                                                 double max_utilization) const {
  std::vector<std::pair<double, uint32_t>> scored;
  for (uint32_t s = 0; s < usage_.size(); s++) {
    if (free_[s] || pinned_[s] || std::find(skip.begin(), skip.end(), s) != skip.end()) continue;
    double u = double(usage_[s].live_bytes) / double(seg_bytes_);
    if (u > max_utilization) continue;
    double age = double(std::max<int64_t>(1, now - usage_[s].mtime + 1));
    scored.push_back({(1.0 - u) * age / (1.0 + u), s});
  }
  std::sort(scored.begin(), scored.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::vector<uint32_t> out;
  for (size_t i = 0; i < scored.size() && i < max; i++) out.push_back(scored[i].second);
  return out;
}

}  // namespace nasd::fs::lfs
