#include "util/sparse_copy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nasd {
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

}  // namespace

bool sparse_copy(const std::string& from, const std::string& to, std::string* error) {
  Fd in, out;
  in.fd = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in.fd < 0) return fail(error, "open " + from);
  struct stat st;
  if (::fstat(in.fd, &st) != 0) return fail(error, "stat " + from);
  out.fd = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out.fd < 0) return fail(error, "create " + to);
  if (::ftruncate(out.fd, st.st_size) != 0) return fail(error, "size " + to);
  off_t pos = 0;
  while (pos < st.st_size) {
    off_t data = ::lseek(in.fd, pos, SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) break;  // only a hole is left
      return fail(error, "seek " + from);
    }
    off_t hole = ::lseek(in.fd, data, SEEK_HOLE);
    if (hole < 0) return fail(error, "seek " + from);
    off_t src = data, dst = data;
    while (src < hole) {
      ssize_t n = ::copy_file_range(in.fd, &src, out.fd, &dst, static_cast<size_t>(hole - src), 0);
      if (n < 0) return fail(error, "copy " + from + " to " + to);
      if (n == 0) break;  // the file shrank under us
    }
    pos = hole;
  }
  if (::fsync(out.fd) != 0) return fail(error, "fsync " + to);
  return true;
}

}  // namespace nasd
