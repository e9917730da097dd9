// The reading end of a direct read (read_layout.h): given a layout from the coordinator, reads
// the groups it names from the nodes that hold their units, every group in parallel (and
// GroupIo reads a group's units in parallel), rebuilds missing units from parity, and
// assembles the READ's bytes with the coordinator's inline pieces.
//
// Cache: decoded groups by (file, group, version). A unit key never holds two contents (every
// rewrite, re-protect or rebalance is a fresh version), so a cached group can never be stale:
// a layout naming a newer version simply misses it. No invalidation is needed for coherence.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "cluster/scaleout/group_io.h"
#include "cluster/scaleout/read_layout.h"

namespace nasd::scaleout {

class DirectReader {
 public:
  // `units` must outlive the reader.
  explicit DirectReader(UnitAccess* units) : io_(units) {}
  // The READ's bytes for `layout` (status Ok) into *data. False (and why) when a group cannot
  // be read: too many of its units are gone (deleted after the layout was taken, or lost).
  bool read(const ReadLayout& layout, std::vector<uint8_t>* data, std::string* error);

  static constexpr size_t kCacheGroups = 32;

 private:
  using Key = std::tuple<uint64_t, uint64_t, uint64_t>;  // file, group, version
  using Bytes = std::shared_ptr<const std::vector<uint8_t>>;
  Bytes cached(const Key& key);
  void remember(const Key& key, Bytes bytes);

  GroupIo io_;
  std::mutex mu_;
  std::map<Key, Bytes> cache_;  // guarded by mu_
  std::list<Key> order_;        // guarded by mu_: most recent first
};

}  // namespace nasd::scaleout
