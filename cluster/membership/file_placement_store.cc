#include "cluster/membership/file_placement_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "cluster/membership/file_lease_authority.h"

namespace nasd::membership {
namespace {

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// The whole file, at most `limit` bytes; false (and *error) on a read error or a larger file.
bool read_file(const std::string& path, size_t limit, std::string* text, bool* found,
               std::string* error) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) {
    if (errno == ENOENT) {
      *found = false;
      return true;
    }
    *error = errno_text("open " + path);
    return false;
  }
  *found = true;
  text->clear();
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = errno_text("read " + path);
      return false;
    }
    if (n == 0) break;
    text->append(buf, static_cast<size_t>(n));
    if (text->size() > limit) {
      *error = path + " is too large";
      return false;
    }
  }
  return true;
}

// "version N\n" followed by the record's text.
bool parse(const std::string& text, Placement* out, std::string* error) {
  const size_t nl = text.find('\n');
  if (text.compare(0, 8, "version ") != 0 || nl == std::string::npos || nl > 28) {
    *error = "placement file: no version line";
    return false;
  }
  const std::string number = text.substr(8, nl - 8);
  if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos) {
    *error = "placement file: bad version";
    return false;
  }
  if (!decode_placement(text.substr(nl + 1), out, error)) return false;
  out->version = std::stoull(number);
  return true;
}

}  // namespace

FilePlacementStore::FilePlacementStore(std::string dir, Clock clock)
    : dir_(std::move(dir)),
      clock_(clock ? std::move(clock) : Clock([] {
        return static_cast<int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
      })) {}

bool FilePlacementStore::read(Placement* out, bool* found, std::string* error) {
  std::string text;
  if (!read_file(dir_ + "/placement", kMaxPlacementBytes + 32, &text, found, error)) return false;
  if (!*found) return true;
  return parse(text, out, error);
}

PlacementWrite FilePlacementStore::write_locked(Placement& next,
                                                const std::function<bool(std::string*)>& check,
                                                std::string* error) {
  const std::string lock_path = dir_ + "/placement.lock";
  Fd lock{::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)};
  if (lock.fd < 0) {
    *error = errno_text("open " + lock_path);
    return PlacementWrite::Unreachable;
  }
  if (::flock(lock.fd, LOCK_EX) < 0) {
    *error = errno_text("flock " + lock_path);
    return PlacementWrite::Unreachable;
  }
  Placement current;
  bool found = false;
  if (!read(&current, &found, error)) return PlacementWrite::Unreachable;
  if ((found ? current.version : 0) != next.version) {
    *error = "the placement changed meanwhile";
    return PlacementWrite::Conflict;
  }
  if (check && !check(error)) return PlacementWrite::Conflict;
  const uint64_t version = next.version + 1;
  const std::string text = "version " + std::to_string(version) + "\n" + encode_placement(next);
  const std::string tmp = dir_ + "/placement.tmp";
  {
    Fd f{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    if (f.fd < 0 || ::write(f.fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
        ::fsync(f.fd) != 0) {
      *error = errno_text("write " + tmp);
      return PlacementWrite::Unreachable;
    }
  }
  if (::rename(tmp.c_str(), (dir_ + "/placement").c_str()) != 0) {
    *error = errno_text("rename " + tmp);
    return PlacementWrite::Unreachable;
  }
  Fd d{::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (d.fd >= 0) ::fsync(d.fd);
  next.version = version;
  return PlacementWrite::Written;
}

PlacementWrite FilePlacementStore::write(Placement& next, std::string* error) {
  return write_locked(next, {}, error);
}

PlacementWrite FilePlacementStore::write_holding(Placement& next, uint32_t volume,
                                                 const std::string& node, uint64_t epoch,
                                                 std::string* error) {
  // The lease record's lock is held until the placement is renamed into place: no acquire can
  // slip in between the check and the write.
  Fd lease_fd;
  const auto holds = [&](std::string* why) {
    const std::string path = dir_ + "/volume-" + std::to_string(volume) + ".lease";
    lease_fd.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (lease_fd.fd < 0 || ::flock(lease_fd.fd, LOCK_EX) < 0) {
      *why = errno_text("lease " + path);
      return false;
    }
    std::string text;
    char buf[512];
    ssize_t n = ::pread(lease_fd.fd, buf, sizeof buf, 0);
    if (n < 0) {
      *why = errno_text("read " + path);
      return false;
    }
    text.assign(buf, static_cast<size_t>(n));
    Lease lease;
    if (!parse_lease(text, &lease)) {
      *why = path + " does not parse";
      return false;
    }
    if (lease.holder != node || lease.epoch != epoch || lease.expires_ms <= clock_()) {
      *why = "volume " + std::to_string(volume) + " is no longer held by " + node + " at epoch " +
             std::to_string(epoch);
      return false;
    }
    return true;
  };
  return write_locked(next, holds, error);
}

}  // namespace nasd::membership
