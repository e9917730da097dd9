// How big the fileset is and what it is made of, computed before anything touches a server.
// SPECsfs2008 sizes its fileset at 120 MiB per requested op/s so that a faster server must hold
// a larger data set; here the same rule is kept with the MiB-per-op/s figure as a parameter, so
// a laptop-sized test can ask for a few KiB per op/s and keep the shape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nasd::bench {

struct FileSizeBucket {
  uint64_t bytes;
  double percent;
};

// A small-file-heavy distribution in the style of the SFS 2.0 / SFS97 fileset (1 KiB 33%,
// 2 KiB 21%, 4 KiB 13%, 8 KiB 10%, 16 KiB 8%, 32 KiB 5%, 64 KiB 4%, 128 KiB 3%, 256 KiB 2%,
// 1 MiB 1%). These figures are recalled from the SFS documentation and could not be checked
// against a primary source while writing this; treat them as "SPECsfs-like", not as SPEC's.
const std::vector<FileSizeBucket>& specsfs_file_sizes();
double mean_file_size(const std::vector<FileSizeBucket>& buckets);

struct FilesetParams {
  double peak_ops = 0;          // highest requested load of the run
  double mib_per_op = 120;      // fileset MiB per requested op/s (SPECsfs2008: 120)
  size_t workers = 1;
  size_t targets = 1;
  size_t files_per_dir = 30;
  uint64_t seed = 1;
  // Size distribution of the data files; empty = specsfs_file_sizes(). When the share of one
  // worker on one target cannot hold the minimum number of files at these sizes (a scaled-down
  // SFS2014 fileset of 1 GiB files), every size is scaled down by the same factor (to no less
  // than 4 KiB) so the byte total still follows the requested load.
  std::vector<FileSizeBucket> file_sizes;
  size_t listing_entries = 0;   // passed through to FilesetShape::listing_entries
};

// The part of the fileset one worker owns on one target: its own directory tree, so workers never
// race on names, and every worker has the same shape on every target.
struct FilesetShape {
  size_t dirs = 0;
  std::vector<uint64_t> file_sizes;  // one per file, in creation order (mixed sizes)
  size_t symlinks = 0;               // each points at one of the files
  size_t spares = 0;                 // empty files that REMOVE may take (CREATE adds more)
  size_t listing_entries = 0;        // a directory of this many empty files for READDIRPLUS; 0 = none
  uint64_t bytes() const;
};

FilesetShape plan_fileset(const FilesetParams& params);

// Split `count` files over the buckets by largest remainder, so even a tiny fileset has the
// distribution's shape; the result is shuffled with `seed` so directories get mixed sizes.
std::vector<uint64_t> apportion_sizes(size_t count, const std::vector<FileSizeBucket>& buckets, uint64_t seed);

}  // namespace nasd::bench
