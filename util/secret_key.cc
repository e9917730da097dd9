#include "util/secret_key.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace nasd {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, const std::string& why) {
  throw std::runtime_error(what + " " + path + ": " + why);
}

std::string errno_text() { return std::strerror(errno); }

std::vector<uint8_t> read_key(int fd, const std::string& path, const std::string& what) {
  std::vector<uint8_t> key(256);
  size_t have = 0;
  while (have < key.size()) {
    ssize_t n = ::read(fd, key.data() + have, key.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(what, path, "read failed: " + errno_text());
    if (n == 0) break;
    have += static_cast<size_t>(n);
  }
  key.resize(have);
  if (key.size() < kMinSecretKeyBytes)
    fail(what, path,
         "holds " + std::to_string(key.size()) + " bytes, need at least " +
             std::to_string(kMinSecretKeyBytes));
  return key;
}

void sync_parent_dir(const std::string& path) {
  auto slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// A temporary file linked into place: link() fails with EEXIST when another process won the
// race, and its key is then the one both use.
void create_key(const std::string& path, const std::string& what) {
  std::vector<uint8_t> key(kSecretKeyBytes);
  if (RAND_bytes(key.data(), static_cast<int>(key.size())) != 1) fail(what, path, "no random bytes");
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) fail(what, tmp, "cannot create: " + errno_text());
  bool ok = ::write(fd, key.data(), key.size()) == static_cast<ssize_t>(key.size()) &&
            ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) {
    ::unlink(tmp.c_str());
    fail(what, tmp, "cannot write: " + errno_text());
  }
  int rc = ::link(tmp.c_str(), path.c_str());
  int link_errno = errno;
  ::unlink(tmp.c_str());
  if (rc != 0 && link_errno != EEXIST) {
    errno = link_errno;
    fail(what, path, "cannot create: " + errno_text());
  }
  sync_parent_dir(path);
}

}  // namespace

std::vector<uint8_t> load_or_create_secret_key(const std::string& path, const std::string& what) {
  for (int attempt = 0; attempt < 2; attempt++) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      std::vector<uint8_t> key;
      try {
        key = read_key(fd, path, what);
      } catch (...) {
        ::close(fd);
        throw;
      }
      ::close(fd);
      return key;
    }
    if (errno != ENOENT) fail(what, path, "cannot open: " + errno_text());
    create_key(path, what);
  }
  fail(what, path, "vanished right after it was created");
}

}  // namespace nasd
