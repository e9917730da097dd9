#include "util/secret_key.h"

#include <fcntl.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "util/durable_file.h"

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
  std::string tmp, error;
  int fd = util::create_private_temp(path, &tmp, &error);
  if (fd < 0) fail(what, path, "cannot create: " + error);
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

void check_private_file(int fd, const std::string& path, const std::string& what) {
  struct stat st{};
  if (::fstat(fd, &st) != 0) fail(what, path, "cannot stat: " + errno_text());
  if (!S_ISREG(st.st_mode)) fail(what, path, "is not a regular file");
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    fail(what, path,
         std::string("is open to other users (mode ") + mode + "); a secret must be readable by "
         "the service's user only: chmod 600 " + path);
  }
}

std::vector<uint8_t> load_or_create_secret_key(const std::string& path, const std::string& what) {
  for (int attempt = 0; attempt < 2; attempt++) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      std::vector<uint8_t> key;
      try {
        check_private_file(fd, path, what);
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
