#include "util/durable_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nasd::util {
namespace {

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string parent_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string random_hex(size_t bytes) {
  unsigned char raw[16];
  size_t have = 0;
  while (have < bytes) {
    const ssize_t n = ::getrandom(raw + have, bytes - have, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return {};
    have += static_cast<size_t>(n);
  }
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes; ++i) out += digits[raw[i] >> 4], out += digits[raw[i] & 15];
  return out;
}

}  // namespace

int create_private_temp(const std::string& path, std::string* tmp, std::string* error) {
  // A name nobody can predict, and O_EXCL|O_NOFOLLOW: whoever can write to the folder cannot
  // have planted the file, or a symlink to another one, under it.
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::string suffix = random_hex(8);
    if (suffix.empty()) return *error = errno_text("getrandom"), -1;
    *tmp = path + ".tmp." + suffix;
    const int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    if (errno != EEXIST) return *error = errno_text("create " + *tmp), -1;
  }
  *error = "create " + path + ".tmp.*: every random name was taken";
  return -1;
}

bool sync_directory(const std::string& dir, std::string* error) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return *error = errno_text("open " + dir), false;
  const bool ok = ::fsync(fd) == 0;
  if (!ok) *error = errno_text("fsync " + dir);
  ::close(fd);
  return ok;
}

bool write_file_durably(const std::string& path, std::string_view data, std::string* error) {
  // The random name also keeps two processes sharing a folder (the nodes of a cluster) off
  // each other's temporary.
  std::string tmp;
  const int fd = create_private_temp(path, &tmp, error);
  if (fd < 0) return false;
  bool ok = write_all(fd, data);
  if (!ok) *error = errno_text("write " + tmp);
  if (ok && ::fsync(fd) != 0) ok = (*error = errno_text("fsync " + tmp), false);
  if (::close(fd) != 0 && ok) ok = (*error = errno_text("close " + tmp), false);
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) ok = (*error = errno_text("rename " + tmp), false);
  if (!ok) {
    ::unlink(tmp.c_str());
    return false;
  }
  return sync_directory(parent_of(path), error);
}

}  // namespace nasd::util
