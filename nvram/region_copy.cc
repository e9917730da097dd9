#include "nvram/region_copy.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>

#include "nvram/log_layout.h"
#include "nvram/region.h"

namespace nasd::nvram {
namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool fail(std::string* error, const std::string& what) {
  if (error) *error = what + ": " + std::strerror(errno);
  return false;
}

bool write_at(int fd, const uint8_t* data, uint64_t length, uint64_t offset) {
  while (length > 0) {
    ssize_t n = ::pwrite(fd, data, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    length -= static_cast<uint64_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

}  // namespace

bool copy_live_region(const std::string& from, const std::string& to, LiveCopyStats* stats,
                      std::string* error) {
  std::unique_ptr<Region> region;
  try {
    region = Region::open_read_only(from);
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
  const RegionHeader& h = *region->header();
  const uint64_t log_size = h.log_size;
  const uint64_t head = h.head;
  // The same scan a recovery makes; it ends at the first invalid record, never before a record
  // the mirror acknowledged (those lie below the stored tail and are valid).
  const uint64_t end = std::max(scan_log(*region, head, head + log_size).end, std::min(h.tail, head + log_size));
  Fd out;
  out.fd = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out.fd < 0) return fail(error, "create " + to);
  if (::ftruncate(out.fd, static_cast<off_t>(h.region_size)) != 0) return fail(error, "size " + to);
  const auto* base = reinterpret_cast<const uint8_t*>(&h);
  if (!write_at(out.fd, base, kRegionHeaderSize, 0)) return fail(error, "write " + to);
  uint64_t copied = kRegionHeaderSize;
  // [head, end) in at most two pieces: up to the end of the log area, then from its start.
  for (uint64_t pos = head; pos < end;) {
    const uint64_t in_lap = pos % log_size;
    const uint64_t n = std::min(end - pos, log_size - in_lap);
    if (!write_at(out.fd, region->at(pos), n, h.log_offset + in_lap)) return fail(error, "write " + to);
    copied += n;
    pos += n;
  }
  if (::fsync(out.fd) != 0) return fail(error, "fsync " + to);
  if (stats) *stats = LiveCopyStats{h.region_size, copied, head, end};
  return true;
}

}  // namespace nasd::nvram
