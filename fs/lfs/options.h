// How one LFS volume is configured: the [volume NAME] section of nasd.conf.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "fs/lfs/write_gate.h"

namespace nasd {
class Config;
class ConfigSection;
}  // namespace nasd

namespace nasd::fs::lfs {

// The cache a volume gets when its config leaves it to nasd (`cache = auto`, the default):
// half the machine's memory shared evenly by the config's volumes, but never more than the
// volume holds (its blocks are all a cache can keep) nor less than 512 MiB, the fixed default
// this rule replaced. Why: a NAS keeps its working set in memory, as the kernel's page cache
// does for a server on a local file system. On the 2-core, 24 GiB development machine
// nfs-ganesha answered the SPECsfs mix's 4 GB fileset from the page cache, while most of
// nasd's READs missed its 512 MiB (each a hop to a pool thread and a read of the volume file)
// and it peaked at about half the rate it reached once its cache held the fileset
// (bench/perf_vs_ganesha.sh, README). The config lists every volume a node may come to serve
// (its partner's too, for failover), so all of them at once stay within half the memory;
// buffers are only taken as blocks are cached, so a volume that holds little uses little.
uint64_t auto_cache_bytes(uint64_t volume_bytes, uint64_t memory_bytes, size_t volumes);
// The machine's physical memory (0 when unknown).
uint64_t physical_memory_bytes();

struct LfsOptions {
  std::string backing;                     // file or block device
  uint64_t size = 8ull << 30;              // bytes, used when creating a file
  uint64_t segment_size = 4ull << 20;
  // Block + inode cache budget. From the config, `cache = auto` (the default) is
  // auto_cache_bytes(size, the machine's memory, the config's volume count).
  uint64_t cache_bytes = 512ull << 20;
  bool atime = false;                      // update atime on READ
  uint32_t volume_id = 0;
  int flush_interval_ms = 1000;            // write-behind of unstable data / journalled ops
  int checkpoint_interval_ms = 30000;
  bool background_threads = true;          // write-behind + cleaner threads
  bool read_only = false;                  // fsck: recover in memory, never write
  // Thick (the default): the backing file's whole size is reserved on the host when it is
  // created or opened, so a full host disk is an error at creation rather than a failed flush.
  // Thin (`allocation = thin`): blocks are taken as the log reaches them; when the host runs out
  // the volume answers NOSPC to calls that need space until space returns.
  bool preallocate = true;
  // For tests only: asked before every batch of writes to the backing store; a nonzero errno
  // fails the batch as if the host had returned it. From the config, `test_fault_file = PATH`
  // sets one that fails writes while PATH holds "eio" or "enospc".
  std::function<int()> write_fault;
  // `snapshot_schedule` (see snapshot_schedule.h), checked when the config is read; empty = none.
  std::string snapshot_schedule;
  // Admits every write to the backing store (not from the config); a refused write fails, and
  // the volume with it. A shared volume is written only while its node owns it.
  std::shared_ptr<WriteGate> write_gate;

  // Reads `id`, `backing`, `size`, `segment_size`, `cache`, `atime`, `allocation` and
  // `snapshot_schedule`. A relative `backing`
  // is taken inside `base_dir` (the node's data_dir). Throws nasd::ConfigError on bad values or
  // unknown keys.
  static LfsOptions from_config(const ConfigSection& section, const Config& config,
                                const std::string& base_dir);
};

}  // namespace nasd::fs::lfs
