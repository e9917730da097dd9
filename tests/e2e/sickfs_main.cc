// nasd-sickfs: a sick disk for the tests, as CharybdeFS is one: a FUSE pass-through file system
// over a folder, whose writes fail with EIO, wait, or find the disk full while a fault says so
// (tests/e2e/sick_faults.h), switched on and off at run time over a control socket.
//   nasd-sickfs --backing DIR --mount MOUNTPOINT --control SOCKET     serves until unmounted
//   nasd-sickfs --control SOCKET faults eio=1 path=v0.lfs              sets the faults (the whole
//   nasd-sickfs --control SOCKET clear | status                        set), prints the answer
// The serving process answers every control line with `ok <settings> writes=N eio=N enospc=N
// slowed=N` or `error <why>`; the client exits 0 on ok. A file is opened without O_DIRECT below
// (the kernel's buffers need not be aligned), so every write reaches this process.
#define FUSE_USE_VERSION 31

#include <dirent.h>
#include <fcntl.h>
#include <fuse3/fuse.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/sick_faults.h"

namespace {

using nasd::e2e::FaultSettings;
using nasd::e2e::SickCommand;
using nasd::e2e::SickDecision;
using nasd::e2e::SickFaults;

std::string g_backing;
SickFaults g_faults;

std::string real(const char* path) { return g_backing + path; }
std::string relative(const char* path) { return path[0] == '/' ? path + 1 : path; }

// Bytes of [offset, offset + length) the file does not hold yet: past its end, or in holes.
uint64_t new_bytes(int fd, uint64_t offset, uint64_t length) {
  struct stat st;
  if (fstat(fd, &st) != 0) return length;
  const uint64_t size = static_cast<uint64_t>(st.st_size), end = offset + length;
  uint64_t fresh = end > size ? end - std::max(offset, size) : 0;
  const uint64_t limit = std::min(end, size);
  for (uint64_t at = offset; at < limit;) {
    const off_t hole = lseek(fd, static_cast<off_t>(at), SEEK_HOLE);
    if (hole < 0 || static_cast<uint64_t>(hole) >= limit) break;
    off_t data = lseek(fd, hole, SEEK_DATA);
    if (data < 0 || static_cast<uint64_t>(data) > limit) data = static_cast<off_t>(limit);
    fresh += static_cast<uint64_t>(data - hole);
    at = static_cast<uint64_t>(data);
  }
  return fresh;
}

// Waits as the fault says; the errno to fail with (negative, as FUSE wants), or 0.
int obey(const SickDecision& d) {
  if (d.slow_ms) std::this_thread::sleep_for(std::chrono::milliseconds(d.slow_ms));
  return -d.error;
}

int fs_getattr(const char* path, struct stat* st, fuse_file_info* fi) {
  const int r = fi ? fstat(static_cast<int>(fi->fh), st) : lstat(real(path).c_str(), st);
  return r == 0 ? 0 : -errno;
}

int fs_readdir(const char* path, void* buf, fuse_fill_dir_t filler, off_t, fuse_file_info*,
               fuse_readdir_flags) {
  DIR* d = opendir(real(path).c_str());
  if (!d) return -errno;
  while (dirent* e = readdir(d)) {
    struct stat st {};
    st.st_ino = e->d_ino;
    st.st_mode = static_cast<mode_t>(DTTOIF(e->d_type));
    if (filler(buf, e->d_name, &st, 0, static_cast<fuse_fill_dir_flags>(0))) break;
  }
  closedir(d);
  return 0;
}

int fs_mkdir(const char* path, mode_t mode) { return mkdir(real(path).c_str(), mode) == 0 ? 0 : -errno; }
int fs_unlink(const char* path) { return unlink(real(path).c_str()) == 0 ? 0 : -errno; }
int fs_rmdir(const char* path) { return rmdir(real(path).c_str()) == 0 ? 0 : -errno; }
int fs_rename(const char* from, const char* to, unsigned int flags) {
  if (flags) return -EINVAL;
  return rename(real(from).c_str(), real(to).c_str()) == 0 ? 0 : -errno;
}
int fs_chmod(const char* path, mode_t mode, fuse_file_info*) {
  return chmod(real(path).c_str(), mode) == 0 ? 0 : -errno;
}
int fs_chown(const char* path, uid_t uid, gid_t gid, fuse_file_info*) {
  return lchown(real(path).c_str(), uid, gid) == 0 ? 0 : -errno;
}
int fs_utimens(const char* path, const timespec tv[2], fuse_file_info*) {
  return utimensat(AT_FDCWD, real(path).c_str(), tv, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : -errno;
}

int fs_truncate(const char* path, off_t size, fuse_file_info* fi) {
  const int r = fi ? ftruncate(static_cast<int>(fi->fh), size) : truncate(real(path).c_str(), size);
  return r == 0 ? 0 : -errno;
}

int fs_open(const char* path, fuse_file_info* fi) {
  const int fd = open(real(path).c_str(), fi->flags & ~O_DIRECT);
  if (fd < 0) return -errno;
  fi->fh = static_cast<uint64_t>(fd);
  return 0;
}

int fs_create(const char* path, mode_t mode, fuse_file_info* fi) {
  const int fd = open(real(path).c_str(), (fi->flags & ~O_DIRECT) | O_CREAT, mode);
  if (fd < 0) return -errno;
  fi->fh = static_cast<uint64_t>(fd);
  return 0;
}

int fs_read(const char*, char* buf, size_t size, off_t offset, fuse_file_info* fi) {
  const ssize_t n = pread(static_cast<int>(fi->fh), buf, size, offset);
  return n < 0 ? -errno : static_cast<int>(n);
}

int fs_write(const char* path, const char* buf, size_t size, off_t offset, fuse_file_info* fi) {
  const int fd = static_cast<int>(fi->fh);
  if (int e = obey(g_faults.decide(relative(path), new_bytes(fd, static_cast<uint64_t>(offset), size))))
    return e;
  const ssize_t n = pwrite(fd, buf, size, offset);
  return n < 0 ? -errno : static_cast<int>(n);
}

int fs_fsync(const char* path, int datasync, fuse_file_info* fi) {
  if (int e = obey(g_faults.decide(relative(path), 0, /*sync=*/true))) return e;
  const int fd = static_cast<int>(fi->fh);
  return (datasync ? fdatasync(fd) : fsync(fd)) == 0 ? 0 : -errno;
}

int fs_fallocate(const char* path, int mode, off_t offset, off_t length, fuse_file_info* fi) {
  const int fd = static_cast<int>(fi->fh);
  const uint64_t fresh = mode ? 0 : new_bytes(fd, static_cast<uint64_t>(offset), static_cast<uint64_t>(length));
  if (int e = obey(g_faults.decide(relative(path), fresh))) return e;
  return fallocate(fd, mode, offset, length) == 0 ? 0 : -errno;
}

int fs_statfs(const char*, struct statvfs* st) {
  if (statvfs(g_backing.c_str(), st) != 0) return -errno;
  // A full disk says so: no more free blocks than the fault grants.
  if (auto left = g_faults.settings().full_after) {
    const uint64_t blocks = *left / std::max<uint64_t>(st->f_frsize, 1);
    st->f_bfree = std::min<fsblkcnt_t>(st->f_bfree, blocks);
    st->f_bavail = std::min<fsblkcnt_t>(st->f_bavail, blocks);
  }
  return 0;
}

void* fs_init(fuse_conn_info* conn, fuse_config* cfg) {
  conn->max_write = 1 << 20;  // a log unit in one request, as a disk takes it
  cfg->use_ino = 1;
  return nullptr;
}

int fs_release(const char*, fuse_file_info* fi) {
  close(static_cast<int>(fi->fh));
  return 0;
}

std::string answer(const std::string& line) {
  FaultSettings settings = g_faults.settings();
  std::string error;
  auto command = nasd::e2e::parse_sick_command(line, &settings, &error);
  if (!command) return "error " + error;
  if (*command == SickCommand::Faults) g_faults.set(settings);
  const auto c = g_faults.counters();
  return "ok " + g_faults.settings().text() + " writes=" + std::to_string(c.writes) +
         " eio=" + std::to_string(c.eio) + " enospc=" + std::to_string(c.enospc) +
         " slowed=" + std::to_string(c.slowed);
}

// One line in, one line out, per connection.
void serve_control(int listener) {
  for (;;) {
    const int c = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    timeval tv{2, 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string line;
    char buf[512];
    while (line.find('\n') == std::string::npos && line.size() <= 1024) {
      const ssize_t n = read(c, buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<size_t>(n));
    }
    line = line.substr(0, line.find('\n'));
    const std::string reply = answer(line) + "\n";
    (void)!write(c, reply.data(), reply.size());
    close(c);
  }
}

sockaddr_un control_address(const std::string& path, bool* ok) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  *ok = path.size() < sizeof a.sun_path;
  if (*ok) std::memcpy(a.sun_path, path.c_str(), path.size());
  return a;
}

int client(const std::string& socket_path, const std::string& line) {
  bool ok = false;
  sockaddr_un a = control_address(socket_path, &ok);
  const int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (!ok || s < 0 || connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    std::cerr << "nasd-sickfs: cannot reach " << socket_path << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  const std::string out = line + "\n";
  (void)!write(s, out.data(), out.size());
  std::string reply;
  char buf[512];
  ssize_t n;
  while ((n = read(s, buf, sizeof buf)) > 0) reply.append(buf, static_cast<size_t>(n));
  close(s);
  std::cout << reply;
  return reply.rfind("ok ", 0) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string backing, mountpoint, control;
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--backing" || a == "--mount" || a == "--control") && i + 1 < argc) {
      (a == "--backing" ? backing : a == "--mount" ? mountpoint : control) = argv[++i];
    } else {
      words.push_back(a);
    }
  }
  if (control.empty() || (mountpoint.empty() && words.empty()) || (!mountpoint.empty() && backing.empty())) {
    std::cerr << "usage: nasd-sickfs --backing DIR --mount MOUNTPOINT --control SOCKET\n"
                 "       nasd-sickfs --control SOCKET faults [eio=F] [slow_ms=N] [full_after=BYTES] "
                 "[path=GLOB] [seed=N] | clear | status\n";
    return 2;
  }
  if (mountpoint.empty()) {
    std::string line;
    for (const std::string& w : words) line += (line.empty() ? "" : " ") + w;
    return client(control, line);
  }
  char resolved[PATH_MAX];
  if (!realpath(backing.c_str(), resolved)) {
    std::cerr << "nasd-sickfs: " << backing << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  g_backing = resolved;
  bool ok = false;
  sockaddr_un a = control_address(control, &ok);
  const int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  unlink(control.c_str());
  if (!ok || listener < 0 || bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      listen(listener, 8) != 0) {
    std::cerr << "nasd-sickfs: control socket " << control << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  std::thread(serve_control, listener).detach();

  fuse_operations ops{};
  ops.init = fs_init;
  ops.getattr = fs_getattr;
  ops.readdir = fs_readdir;
  ops.mkdir = fs_mkdir;
  ops.unlink = fs_unlink;
  ops.rmdir = fs_rmdir;
  ops.rename = fs_rename;
  ops.chmod = fs_chmod;
  ops.chown = fs_chown;
  ops.utimens = fs_utimens;
  ops.truncate = fs_truncate;
  ops.open = fs_open;
  ops.create = fs_create;
  ops.read = fs_read;
  ops.write = fs_write;
  ops.fsync = fs_fsync;
  ops.fallocate = fs_fallocate;
  ops.statfs = fs_statfs;
  ops.release = fs_release;
  std::vector<std::string> args = {"nasd-sickfs", mountpoint, "-f", "-o", "fsname=nasd-sickfs"};
  std::vector<char*> fuse_argv;
  for (std::string& s : args) fuse_argv.push_back(s.data());
  return fuse_main(static_cast<int>(fuse_argv.size()), fuse_argv.data(), &ops, nullptr);
}
