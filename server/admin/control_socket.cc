#include "server/admin/control_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "server/admin/admin_protocol.h"
#include "util/contained_thread.h"

namespace nasd::admin {
namespace {

// A client that connects and then stalls must not wedge the admin thread.
constexpr int kClientTimeoutMs = 2000;

void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

ControlSocket::ControlSocket(std::string path, CommandRegistry& registry)
    : path_(std::move(path)), registry_(registry) {}

ControlSocket::~ControlSocket() { stop(); }

void ControlSocket::start() {
  if (thread_.joinable()) return;
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  if (path_.size() >= sizeof sun.sun_path)
    throw std::runtime_error("admin socket path too long: " + path_);
  std::memcpy(sun.sun_path, path_.c_str(), path_.size() + 1);

  struct stat st{};
  if (lstat(path_.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      throw std::runtime_error("admin socket path exists and is not a socket: " + path_);
    unlink(path_.c_str());  // left behind by a previous run
  }
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw_errno("socket");
  mode_t old_mask = umask(0077);
  int rc = bind(listen_fd_, reinterpret_cast<sockaddr*>(&sun), sizeof sun);
  umask(old_mask);
  if (rc == 0) chmod(path_.c_str(), 0600);
  if (rc < 0 || listen(listen_fd_, 16) < 0) {
    int err = errno;
    close(listen_fd_);
    listen_fd_ = -1;
    throw std::system_error(err, std::generic_category(), "admin socket " + path_);
  }
  if (pipe2(wake_pipe_, O_CLOEXEC) < 0) {
    int err = errno;
    close(listen_fd_);
    listen_fd_ = -1;
    unlink(path_.c_str());
    throw std::system_error(err, std::generic_category(), "pipe");
  }
  thread_ = util::contained_thread("admin", "control socket", [this] { serve(); });
}

void ControlSocket::stop() {
  if (!thread_.joinable()) return;
  char c = 'x';
  [[maybe_unused]] ssize_t n = write(wake_pipe_[1], &c, 1);
  thread_.join();
  close(listen_fd_);
  close(wake_pipe_[0]);
  close(wake_pipe_[1]);
  listen_fd_ = wake_pipe_[0] = wake_pipe_[1] = -1;
  unlink(path_.c_str());
}

void ControlSocket::serve() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_pipe_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      // EMFILE and friends: wait a little instead of spinning on the ready listener.
      if (errno != EINTR && errno != ECONNABORTED) poll(nullptr, 0, 100);
      continue;
    }
    handle(fd);
    close(fd);
  }
}

void ControlSocket::handle(int fd) {
  std::string request;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kClientTimeoutMs);
  std::optional<std::vector<std::string>> words;
  while (!(words = decode_admin_request(request))) {
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    deadline - std::chrono::steady_clock::now())
                                    .count());
    pollfd p{fd, POLLIN, 0};
    if (left <= 0) return;
    int rc = poll(&p, 1, left);
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    request.append(buf, static_cast<size_t>(n));
    if (request.size() > kMaxAdminRequest) {
      words.reset();
      std::string reply = encode_admin_response(false, "request too large\n");
      [[maybe_unused]] ssize_t w = send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
      return;
    }
  }
  CommandRegistry::Result result = registry_.run(*words);
  std::string reply = encode_admin_response(result.ok, result.text);
  size_t off = 0;
  while (off < reply.size()) {
    pollfd p{fd, POLLOUT, 0};
    int rc = poll(&p, 1, kClientTimeoutMs);
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return;
    ssize_t n = send(fd, reply.data() + off, reply.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

}  // namespace nasd::admin
