// nasd-mkfs: formats a backing file or block device as an empty LFS volume.
//   nasd-mkfs --backing PATH --size 8G --id 0 [--segment-size 4M]
#include <cstdio>
#include <cstring>
#include <string>

#include "fs/lfs/lfs_volume.h"
#include "util/config.h"

namespace {
int usage() {
  std::fprintf(stderr,
               "usage: nasd-mkfs --backing PATH --size SIZE --id N [--segment-size SIZE]\n"
               "  sizes take k/M/G/T suffixes; a block device uses its own size\n");
  return 2;
}
}  // namespace

int main(int argc, char** argv) {
  nasd::fs::lfs::LfsOptions opts;
  bool have_backing = false;
  try {
    for (int i = 1; i < argc; i++) {
      std::string a = argv[i];
      if (i + 1 >= argc) return usage();
      std::string v = argv[++i];
      if (a == "--backing") { opts.backing = v; have_backing = true; }
      else if (a == "--size") opts.size = nasd::parse_size(v);
      else if (a == "--segment-size") opts.segment_size = nasd::parse_size(v);
      else if (a == "--id") opts.volume_id = uint32_t(std::stoul(v));
      else return usage();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nasd-mkfs: %s\n", e.what());
    return 2;
  }
  if (!have_backing) return usage();
  std::string err;
  if (!nasd::fs::lfs::LfsVolume::mkfs(opts, &err)) {
    std::fprintf(stderr, "nasd-mkfs: %s\n", err.c_str());
    return 1;
  }
  std::printf("formatted %s: volume %u, segment size %llu KiB\n", opts.backing.c_str(),
              opts.volume_id, (unsigned long long)(opts.segment_size >> 10));
  return 0;
}
