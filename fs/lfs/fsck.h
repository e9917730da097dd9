// Offline consistency check of an LFS volume: inode map vs inodes, block pointers (range, free
// segments, double use, per-inode block counts), segment usage vs actual live bytes, directory
// structure, link counts vs directory references, orphans, and every snapshot (it loads, and
// every block it references lies in a pinned segment).
#pragma once

#include <string>
#include <vector>

#include "fs/lfs/options.h"

namespace nasd::fs::lfs {

class Store;

struct FsckReport {
  std::vector<std::string> problems;
  uint64_t inodes = 0, directories = 0, blocks = 0;
  uint64_t snapshots = 0;  // checked: each loads and every block it needs is pinned
  std::string error;  // the volume could not be opened at all
  bool clean() const { return problems.empty() && error.empty(); }
};

// Opens the volume read-only (recovering in memory) and checks it.
FsckReport fsck_volume(const LfsOptions& opts);
// Checks an open store (no dirty state expected).
void fsck_store(Store& store, FsckReport* report);

}  // namespace nasd::fs::lfs
