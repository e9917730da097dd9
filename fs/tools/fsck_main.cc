// nasd-fsck: checks an LFS volume offline (read-only) and lists every inconsistency.
// `nasd-fsck --scaleout ...` checks a scale-out volume's groups instead: that mode is the
// program nasd-fsck-scaleout beside this one (cluster/scaleout/tools), so fs/ links nothing of
// the cluster.
// Exit status: 0 clean, 1 inconsistencies found, 2 usage or open error.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "fs/lfs/fsck.h"

int main(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "--scaleout") {
    std::string self = argv[0];
    const size_t slash = self.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : self.substr(0, slash + 1);
    // Beside this program in a build tree or an install; else on the PATH.
    std::vector<std::string> tries = {dir + "nasd-fsck-scaleout",
                                      dir + "../cluster/scaleout/nasd-fsck-scaleout"};
    for (const std::string& t : tries) {
      if (::access(t.c_str(), X_OK) == 0) ::execv(t.c_str(), argv);
    }
    ::execvp("nasd-fsck-scaleout", argv);
    std::fprintf(stderr, "nasd-fsck: --scaleout needs nasd-fsck-scaleout (not found)\n");
    return 2;
  }
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
