#include "cluster/scaleout/direct_reader.h"

#include <future>

namespace nasd::scaleout {

DirectReader::Bytes DirectReader::cached(const Key& key) {
  std::lock_guard lock(mu_);
  auto it = cache_.find(key);
  if (it == cache_.end()) return nullptr;
  order_.remove(key);
  order_.push_front(key);
  return it->second;
}

void DirectReader::remember(const Key& key, Bytes bytes) {
  std::lock_guard lock(mu_);
  if (cache_.emplace(key, std::move(bytes)).second) order_.push_front(key);
  while (order_.size() > kCacheGroups) {
    cache_.erase(order_.back());
    order_.pop_back();
  }
}

bool DirectReader::read(const ReadLayout& layout, std::vector<uint8_t>* data, std::string* error) {
  const size_t n = layout.records.size();
  std::vector<Bytes> have(n);
  std::vector<std::future<bool>> running(n);
  std::vector<std::vector<uint8_t>> fetched(n);
  std::vector<std::string> why(n);
  size_t missing = 0;
  for (size_t i = 0; i < n; i++) {
    const GroupRecord& r = layout.records[i];
    if (!(have[i] = cached({r.file, r.group, r.version}))) missing++;
  }
  for (size_t i = 0; i < n; i++) {
    if (have[i]) continue;
    auto fetch = [this, &r = layout.records[i], &out = fetched[i], &msg = why[i]] {
      GroupHealth health;
      return io_.read_group(r, &out, &health, &msg);
    };
    // One group on this thread (read_group reads its units in parallel); several side by side.
    running[i] = std::async(missing == 1 ? std::launch::deferred : std::launch::async, fetch);
  }
  bool ok = true;
  for (size_t i = 0; i < n; i++) {
    if (have[i]) continue;
    if (!running[i].get()) {
      ok = false;
      if (error) *error = why[i];
      continue;
    }
    const GroupRecord& r = layout.records[i];
    have[i] = std::make_shared<const std::vector<uint8_t>>(std::move(fetched[i]));
    remember({r.file, r.group, r.version}, have[i]);
  }
  if (!ok) return false;
  std::vector<std::span<const uint8_t>> groups(n);
  for (size_t i = 0; i < n; i++) groups[i] = *have[i];
  if (!assemble_read(layout, groups, data)) {
    if (error) *error = "a group read back shorter than its record";
    return false;
  }
  return true;
}

}  // namespace nasd::scaleout
