#include "cluster/membership/file_lease_authority.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <sstream>
#include <sys/file.h>
#include <unistd.h>

namespace nasd::membership {
namespace {

int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

// Closes the descriptor (and so drops the flock) on every path out.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string format_lease(const Lease& lease) {
  return "nasd-lease 1 " + std::to_string(lease.epoch) + " " + std::to_string(lease.expires_ms) +
         " " + lease.holder + "\n";
}

bool parse_lease(const std::string& text, Lease* out) {
  if (text.empty()) {  // a new file: the lease was never taken
    *out = Lease{};
    return true;
  }
  std::istringstream in(text);
  std::string magic, holder, rest;
  int version = 0;
  Lease lease;
  if (!(in >> magic >> version >> lease.epoch >> lease.expires_ms) || magic != "nasd-lease" ||
      version != 1) {
    return false;
  }
  in >> holder;  // absent when free
  if (in >> rest) return false;
  lease.holder = holder;
  *out = lease;
  return true;
}

FileLeaseAuthority::FileLeaseAuthority(std::string dir, Clock clock)
    : dir_(std::move(dir)), clock_(clock ? std::move(clock) : Clock(wall_clock_ms)) {}

std::string FileLeaseAuthority::path_of(uint32_t volume_id) const {
  return dir_ + "/volume-" + std::to_string(volume_id) + ".lease";
}

LeaseAnswer FileLeaseAuthority::update(uint32_t volume_id,
                                       const std::function<bool(Lease&)>& change) {
  LeaseAnswer answer;
  std::string path = path_of(volume_id);
  FdGuard f{::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)};
  if (f.fd < 0) {
    answer.error = errno_text("open " + path);
    return answer;
  }
  if (::flock(f.fd, LOCK_EX) < 0) {
    answer.error = errno_text("flock " + path);
    return answer;
  }
  char buf[512];
  ssize_t n = ::pread(f.fd, buf, sizeof buf - 1, 0);
  if (n < 0) {
    answer.error = errno_text("read " + path);
    return answer;
  }
  Lease lease;
  if (!parse_lease(std::string(buf, static_cast<size_t>(n)), &lease)) {
    answer.error = "corrupt lease record in " + path;
    return answer;
  }
  bool granted = change(lease);
  if (granted) {
    std::string text = format_lease(lease);
    // One pwrite of a record far smaller than a page: a reader under the lock sees either the
    // old or the new record. No fsync: the record only has to reach the other node, which
    // reads it through the same page cache (one machine) or the shared file system's
    // coherence; a record lost with the host had expired by the time anything restarts. An
    // fsync behind the volumes' heavy writes on the same file system would stall renewals for
    // seconds and make a busy node fence itself.
    if (::ftruncate(f.fd, 0) < 0 ||
        ::pwrite(f.fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
      answer.error = errno_text("write " + path);
      return answer;
    }
  }
  answer.verdict = granted ? LeaseVerdict::Granted : LeaseVerdict::HeldByOther;
  answer.lease = lease;
  return answer;
}

LeaseAnswer FileLeaseAuthority::acquire(uint32_t volume_id, const std::string& node,
                                        int64_t duration_ms) {
  if (node.empty() || node.find_first_of(" \t\r\n") != std::string::npos) {
    return {LeaseVerdict::Unreachable, {}, "invalid node name '" + node + "'"};
  }
  int64_t now = clock_();
  return update(volume_id, [&](Lease& lease) {
    return apply_acquire(lease, node, now, duration_ms);
  });
}

bool FileLeaseAuthority::release(uint32_t volume_id, const std::string& node) {
  return update(volume_id, [&](Lease& lease) { return apply_release(lease, node); }).verdict ==
         LeaseVerdict::Granted;
}

bool FileLeaseAuthority::inspect(uint32_t volume_id, Lease* out, std::string* error) {
  LeaseAnswer answer = update(volume_id, [](Lease&) { return false; });
  if (answer.verdict == LeaseVerdict::Unreachable) {
    *error = answer.error;
    return false;
  }
  *out = answer.lease;
  return true;
}

}  // namespace nasd::membership
