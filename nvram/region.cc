#include "nvram/region.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <stdexcept>

#include "nvram/crc32c.h"
#include "util/page_prep.h"

namespace nasd::nvram {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int err = 0) {
  std::string msg = "nvram region " + path + ": " + what;
  if (err != 0) msg += std::string(": ") + std::strerror(err);
  throw std::runtime_error(msg);
}

uint32_t static_crc(const RegionHeader& h) {
  RegionHeader copy = h;
  copy.static_crc = 0;
  return crc32c(&copy, offsetof(RegionHeader, pad0));
}

uint64_t random_uuid() {
  std::random_device rd;
  return (uint64_t(rd()) << 32) ^ rd() ^ 1;  // never 0: 0 means "no region" on the wire
}

uint8_t* map_file(const std::string& path, int fd, uint64_t size, bool writable, bool populate = true) {
  int prot = PROT_READ | (writable ? PROT_WRITE : 0);
  // Populated up front: otherwise the first record through each page pays a fault in which the
  // kernel zeroes the page (20% of the server's CPU on a fresh node's first sequential writes,
  // issue 12 profile). MAP_POPULATE alone maps a shared file's pages read-only, so each first
  // store still took ext4's write-protect fault on the event loop; util::prepare_for_stores
  // maps them writable without changing a byte (a first lap of the log measured 300 us per MiB
  // without it, later laps 40). The cost (~90 ms for 256 MiB) moves to start-up, once. A
  // read-only view (inspection tools) is not populated.
  void* p = mmap(nullptr, size, prot, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) fail(path, "mmap", errno);
  if (writable && populate) util::prepare_for_stores(static_cast<uint8_t*>(p), size);
  return static_cast<uint8_t*>(p);
}

// Reserves the whole file on the host. On failure an empty new file is left (the next start
// creates it again) and the error says how much space was needed.
void allocate_or_fail(const std::string& path, int fd, uint64_t size, bool drop_on_failure) {
  int e = posix_fallocate(fd, 0, static_cast<off_t>(size));
  if (e == 0) return;
  if (drop_on_failure && ftruncate(fd, 0) != 0) { /* the message below matters more */ }
  close(fd);
  fail(path, "cannot allocate " + std::to_string(size >> 20) + " MiB on the host" +
                 (e == ENOSPC ? " (free space on its filesystem or set a smaller [nvram] size)" : ""),
       e);
}

}  // namespace

const char* durability_mode_name(DurabilityMode m) {
  return m == DurabilityMode::Host ? "host" : "process";
}

Region::Region(std::string path, int fd, uint8_t* base, uint64_t size, DurabilityMode mode,
               bool created, bool writable)
    : path_(std::move(path)), fd_(fd), base_(base), size_(size), mode_(mode), created_(created),
      writable_(writable) {}

Region::~Region() {
  munmap(base_, size_);
  close(fd_);
}

std::unique_ptr<Region> Region::create(const std::string& path, uint64_t size, DurabilityMode mode,
                                       uint64_t uuid, uint64_t start) {
  if (size < kMinRegionSize) fail(path, "size " + std::to_string(size) + " is too small");
  size &= ~(kRegionHeaderSize - 1);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) fail(path, "open", errno);
  // Truncating to 0 first drops whatever the file held. The region is then allocated whole
  // (not sparse): a store into a hole of a full filesystem would be a SIGBUS, not an error.
  if (ftruncate(fd, 0) != 0) {
    int e = errno;
    close(fd);
    fail(path, "ftruncate", e);
  }
  allocate_or_fail(path, fd, size, /*drop_on_failure=*/true);
  uint8_t* base = map_file(path, fd, size, true);
  auto* h = reinterpret_cast<RegionHeader*>(base);
  h->magic = kRegionMagic;
  h->version = kRegionVersion;
  h->header_size = kRegionHeaderSize;
  h->region_size = size;
  h->log_offset = kRegionHeaderSize;
  h->log_size = size - kRegionHeaderSize;
  h->uuid = uuid != 0 ? uuid : random_uuid();
  h->static_crc = static_crc(*h);
  h->epoch = 0;
  h->head = start;
  h->tail = start;
  std::unique_ptr<Region> r(new Region(path, fd, base, size, mode, true, true));
  if (mode == DurabilityMode::Host && fdatasync(fd) != 0) fail(path, "fdatasync", errno);
  return r;
}

std::unique_ptr<Region> Region::open(const std::string& path, uint64_t size, DurabilityMode mode) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0 || st.st_size == 0) {
    if (size == 0) fail(path, "does not exist and no size was given");
    return create(path, size, mode, 0);
  }
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) fail(path, "open", errno);
  auto file_size = static_cast<uint64_t>(st.st_size);
  if (file_size < kMinRegionSize) {
    close(fd);
    fail(path, "file is too small to be a region");
  }
  // A region made sparse (by an older version, or copied) gets its holes filled before it is
  // mapped, so a full host is this error at start rather than a SIGBUS later.
  // Such a region is not populated: it is a takeover's copy of a partner's NVRAM
  // (nvram/region_copy.h), read once for its few live records, and faulting its hundreds of
  // MiB of holes in cost over a second of every takeover. (A node's own region is allocated
  // in full when made, and populated at every start.)
  const bool sparse = static_cast<uint64_t>(st.st_blocks) * 512 < file_size;
  allocate_or_fail(path, fd, file_size, /*drop_on_failure=*/false);
  uint8_t* base = map_file(path, fd, file_size, true, !sparse);
  std::unique_ptr<Region> r(new Region(path, fd, base, file_size, mode, false, true));
  const RegionHeader* h = r->header();
  if (h->magic != kRegionMagic) fail(path, "not an NVRAM region (bad magic)");
  if (h->version != kRegionVersion)
    fail(path, "unsupported region version " + std::to_string(h->version));
  if (h->static_crc != static_crc(*h)) fail(path, "header checksum mismatch");
  if (h->region_size != file_size || h->log_offset + h->log_size != file_size)
    fail(path, "header describes " + std::to_string(h->region_size) + " bytes but the file has " +
                   std::to_string(file_size));
  if (size != 0 && (size & ~(kRegionHeaderSize - 1)) != file_size)
    fail(path, "region holds " + std::to_string(file_size) + " bytes but the configuration asks for " +
                   std::to_string(size) + "; drain it (clean shutdown) and remove it to resize");
  if (h->head > h->tail || h->tail - h->head > h->log_size) fail(path, "corrupt head/tail");
  r->header()->epoch++;
  if (!r->persist_header()) fail(path, "msync", errno);
  return r;
}

std::unique_ptr<Region> Region::open_read_only(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, "open", errno);
  struct stat st{};
  if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) < kMinRegionSize) {
    close(fd);
    fail(path, "file is too small to be a region");
  }
  auto size = static_cast<uint64_t>(st.st_size);
  uint8_t* base = map_file(path, fd, size, false);
  std::unique_ptr<Region> r(new Region(path, fd, base, size, DurabilityMode::Process, false, false));
  const RegionHeader* h = r->header();
  if (h->magic != kRegionMagic || h->static_crc != static_crc(*h) || h->region_size != size)
    fail(path, "not a valid NVRAM region");
  return r;
}

bool Region::persist_bytes(uint64_t offset, uint64_t length) {
  if (mode_ != DurabilityMode::Host || !writable_ || length == 0) return true;
  uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t start = offset & ~(page - 1);
  uint64_t end = offset + length;
  return msync(base_ + start, end - start, MS_SYNC) == 0;
}

bool Region::persist_log(uint64_t from, uint64_t to) {
  if (to <= from) return true;
  uint64_t log_size = header()->log_size;
  uint64_t log_offset = header()->log_offset;
  if (to - from >= log_size) return persist_bytes(log_offset, log_size);
  uint64_t a = from % log_size, b = to % log_size;
  if (a < b || b == 0) return persist_bytes(log_offset + a, (b == 0 ? log_size : b) - a);
  return persist_bytes(log_offset + a, log_size - a) && persist_bytes(log_offset, b);
}

bool Region::persist_header() { return persist_bytes(0, kRegionHeaderSize); }

}  // namespace nasd::nvram
