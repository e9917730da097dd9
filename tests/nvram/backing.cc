#include "tests/nvram/backing.h"

#include <stdexcept>

#include "tests/nvram/test_util.h"
#include "tests/support/memory_fs.h"
#ifdef NASD_HAVE_LFS
#include "fs/lfs/lfs_volume.h"
#endif

namespace nasd::nvram::testing {

const char* backing_name(Backing b) { return b == Backing::Lfs ? "lfs" : "mem"; }

std::vector<Backing> available_backings() {
#ifdef NASD_HAVE_LFS
  return {Backing::Mem, Backing::Lfs};
#else
  return {Backing::Mem};
#endif
}

std::shared_ptr<fs::JournalTarget> open_backing(Backing b, const std::string& dir, uint32_t id) {
  if (b == Backing::Mem)
    return std::make_shared<test_support::MemoryFs>(id, mem_target_options(dir + "/fs.state"));
#ifdef NASD_HAVE_LFS
  fs::lfs::LfsOptions o;
  o.backing = dir + "/volume.lfs";
  o.size = 256ull << 20;
  o.segment_size = 1ull << 20;
  o.cache_bytes = 64ull << 20;
  o.volume_id = id;
  std::string err;
  auto v = fs::lfs::LfsVolume::open_or_create(o, &err);
  if (!v) throw std::runtime_error("cannot open LFS volume: " + err);
  return std::shared_ptr<fs::JournalTarget>(std::move(v));
#else
  throw std::runtime_error("the LFS is not built");
#endif
}

}  // namespace nasd::nvram::testing
