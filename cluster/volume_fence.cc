#include "cluster/volume_fence.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "util/log.h"

namespace nasd::cluster {
namespace {

// The file: the token (8 bytes, little-endian on the only machines we run on), then the name
// of the node that took it, for the messages.
constexpr size_t kNameMax = 64;
struct FenceRecord {
  uint64_t token = 0;
  char node[kNameMax] = {};
};

bool lock(int fd, short type, bool wait) {
  struct flock fl{};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  for (;;) {
    if (::fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) == 0) return true;
    if (errno != EINTR) return false;
  }
}

FenceRecord read_record(int fd) {
  FenceRecord r;
  if (::pread(fd, &r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) r = FenceRecord{};
  r.node[kNameMax - 1] = '\0';
  return r;
}

}  // namespace

std::shared_ptr<VolumeFence> VolumeFence::take(const std::string& path, const std::string& node,
                                               std::function<bool()> lease_ok,
                                               std::chrono::milliseconds wait,
                                               std::string* error,
                                               std::optional<uint64_t> lease_epoch) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = path + ": " + std::strerror(errno);
    return nullptr;
  }
  // Polled rather than blocking, so a node that hangs inside a write cannot hang us too.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (!lock(fd, F_WRLCK, false)) {
    const bool busy = errno == EAGAIN || errno == EACCES;
    if (!busy || std::chrono::steady_clock::now() >= deadline) {
      const int saved = errno;
      const FenceRecord held = read_record(fd);
      *error = busy
                   ? path + ": a write admitted for " + std::string(held.node) + " (token " +
                         std::to_string(held.token) + ") is still running after " +
                         std::to_string(wait.count()) + " ms"
                   : path + ": " + std::strerror(saved);
      ::close(fd);
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  FenceRecord r = read_record(fd);
  if (lease_epoch && r.token > *lease_epoch) {
    *error = path + ": taken by " + std::string(r.node) + " with lease epoch " +
             std::to_string(r.token) + ", later than ours (" + std::to_string(*lease_epoch) +
             "): the lease is no longer ours";
    lock(fd, F_UNLCK, false);
    ::close(fd);
    return nullptr;
  }
  // The same epoch again is the same lease (an open retried under it).
  r.token = lease_epoch ? *lease_epoch : r.token + 1;
  std::memset(r.node, 0, sizeof r.node);
  std::strncpy(r.node, node.c_str(), kNameMax - 1);
  const bool written = ::pwrite(fd, &r, sizeof r, 0) == static_cast<ssize_t>(sizeof r);
  const int saved = errno;
  lock(fd, F_UNLCK, false);
  if (!written) {
    *error = path + ": writing the token: " + std::strerror(saved);
    ::close(fd);
    return nullptr;
  }
  return std::shared_ptr<VolumeFence>(
      new VolumeFence(fd, path, node, r.token, std::move(lease_ok)));
}

std::string VolumeFence::fence_path(const std::string& lease_dir, const std::string& volume,
                                    bool epochs) {
  return lease_dir + "/" + volume + (epochs ? ".epoch-fence" : ".fence");
}

VolumeFence::VolumeFence(int fd, std::string path, std::string node, uint64_t token,
                         std::function<bool()> lease_ok)
    : fd_(fd),
      path_(std::move(path)),
      node_(std::move(node)),
      token_(token),
      lease_ok_(std::move(lease_ok)) {}

VolumeFence::~VolumeFence() { ::close(fd_); }

bool VolumeFence::enter() {
  if (lease_ok_ && !lease_ok_()) return false;
  // Waits only while a new owner is taking the fence, which it does in a few system calls.
  if (!lock(fd_, F_RDLCK, true)) return false;
  const FenceRecord r = read_record(fd_);
  if (r.token == token_) return true;
  lock(fd_, F_UNLCK, false);
  if (!reported_) {
    reported_ = true;
    util::log("cluster").warn(path_ + ": taken by " + std::string(r.node) + " (token " + std::to_string(r.token) +
         ", ours " + std::to_string(token_) + "): " + node_ + " writes nothing more");
  }
  return false;
}

void VolumeFence::leave() { lock(fd_, F_UNLCK, false); }

}  // namespace nasd::cluster
