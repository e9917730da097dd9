#include "bench/fileset_plan.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace nasd::bench {

namespace {
constexpr uint64_t kKiB = 1024;
constexpr size_t kMinFilesPerWorker = 10;
constexpr uint64_t kMinScaledFileBytes = 4 * kKiB;
}  // namespace

const std::vector<FileSizeBucket>& specsfs_file_sizes() {
  static const std::vector<FileSizeBucket> sizes = {
      {1 * kKiB, 33}, {2 * kKiB, 21},  {4 * kKiB, 13},   {8 * kKiB, 10},   {16 * kKiB, 8},
      {32 * kKiB, 5}, {64 * kKiB, 4},  {128 * kKiB, 3},  {256 * kKiB, 2},  {1024 * kKiB, 1},
  };
  return sizes;
}

double mean_file_size(const std::vector<FileSizeBucket>& buckets) {
  double weight = 0, bytes = 0;
  for (const FileSizeBucket& b : buckets) {
    weight += b.percent;
    bytes += b.percent * static_cast<double>(b.bytes);
  }
  return weight > 0 ? bytes / weight : 0;
}

uint64_t FilesetShape::bytes() const {
  return std::accumulate(file_sizes.begin(), file_sizes.end(), uint64_t{0});
}

std::vector<uint64_t> apportion_sizes(size_t count, const std::vector<FileSizeBucket>& buckets, uint64_t seed) {
  double weight = 0;
  for (const FileSizeBucket& b : buckets) weight += b.percent;
  std::vector<size_t> n(buckets.size());
  std::vector<std::pair<double, size_t>> remainders;
  size_t given = 0;
  for (size_t i = 0; i < buckets.size(); ++i) {
    double exact = static_cast<double>(count) * buckets[i].percent / weight;
    n[i] = static_cast<size_t>(std::floor(exact));
    given += n[i];
    remainders.push_back({exact - static_cast<double>(n[i]), i});
  }
  // Largest remainders first; ties go to the smaller (more common) size.
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; given < count; ++k, ++given) ++n[remainders[k % remainders.size()].second];
  std::vector<uint64_t> sizes;
  sizes.reserve(count);
  for (size_t i = 0; i < buckets.size(); ++i) sizes.insert(sizes.end(), n[i], buckets[i].bytes);
  std::mt19937_64 rng(seed);
  std::shuffle(sizes.begin(), sizes.end(), rng);
  return sizes;
}

FilesetShape plan_fileset(const FilesetParams& p) {
  std::vector<FileSizeBucket> buckets = p.file_sizes.empty() ? specsfs_file_sizes() : p.file_sizes;
  double total_bytes = p.peak_ops * p.mib_per_op * 1024.0 * 1024.0;
  double pairs = static_cast<double>(std::max<size_t>(1, p.workers) * std::max<size_t>(1, p.targets));
  double share = total_bytes / pairs;
  double mean = mean_file_size(buckets);
  if (!p.file_sizes.empty() && share < mean * static_cast<double>(kMinFilesPerWorker)) {
    double factor = share / (mean * static_cast<double>(kMinFilesPerWorker));
    for (FileSizeBucket& b : buckets) {
      b.bytes = std::max<uint64_t>(kMinScaledFileBytes, static_cast<uint64_t>(static_cast<double>(b.bytes) * factor));
    }
    mean = mean_file_size(buckets);
  }
  // (less a hair, so a share computed as exactly N files does not become N + 1 by rounding)
  auto files = static_cast<size_t>(std::ceil(share / mean - 1e-6));
  files = std::max(files, kMinFilesPerWorker);

  FilesetShape shape;
  shape.file_sizes = apportion_sizes(files, buckets, p.seed);
  if (!p.file_sizes.empty()) {
    // SFS2014 sizes its fileset by capacity: when rounding to whole files of a few sizes fell
    // short of the share, one more file makes up the difference (rounded up to 4 KiB).
    double have = static_cast<double>(shape.bytes());
    if (have < share) {
      auto missing = static_cast<uint64_t>(std::ceil((share - have) / 4096.0)) * 4096;
      shape.file_sizes.push_back(missing);
      files = shape.file_sizes.size();
    }
  }
  size_t per_dir = std::max<size_t>(1, p.files_per_dir);
  shape.dirs = (files + per_dir - 1) / per_dir;
  shape.symlinks = std::max<size_t>(1, files / 20);
  shape.spares = std::max<size_t>(4, files / 10);
  shape.listing_entries = p.listing_entries;
  return shape;
}

}  // namespace nasd::bench
