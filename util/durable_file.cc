#include "util/durable_file.h"

#include <fcntl.h>
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

}  // namespace

bool sync_directory(const std::string& dir, std::string* error) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return *error = errno_text("open " + dir), false;
  const bool ok = ::fsync(fd) == 0;
  if (!ok) *error = errno_text("fsync " + dir);
  ::close(fd);
  return ok;
}

bool write_file_durably(const std::string& path, std::string_view data, std::string* error) {
  // The pid keeps two processes sharing a folder (the nodes of a cluster) off each other's
  // temporary.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return *error = errno_text("create " + tmp), false;
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
