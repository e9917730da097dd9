// nasd-fsck: checks an LFS volume offline (read-only) and lists every inconsistency.
// Exit status: 0 clean, 1 inconsistencies found, 2 usage or open error.
#include <cstdio>
#include <string>

#include "fs/lfs/fsck.h"

int main(int argc, char** argv) {
  if (argc != 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: nasd-fsck PATH\n");
    return 2;
  }
  nasd::fs::lfs::LfsOptions opts;
  opts.backing = argv[1];
  opts.background_threads = false;
  opts.cache_bytes = 256ull << 20;
  nasd::fs::lfs::FsckReport r = nasd::fs::lfs::fsck_volume(opts);
  if (!r.error.empty()) {
    std::fprintf(stderr, "nasd-fsck: %s\n", r.error.c_str());
    return 2;
  }
  for (const std::string& p : r.problems) std::printf("%s\n", p.c_str());
  std::printf("%s: %llu inodes, %llu directories, %llu blocks, %llu snapshots: %s\n", argv[1],
              (unsigned long long)r.inodes, (unsigned long long)r.directories,
              (unsigned long long)r.blocks, (unsigned long long)r.snapshots,
              r.clean() ? "clean" : (std::to_string(r.problems.size()) + " problems").c_str());
  return r.clean() ? 0 : 1;
}
